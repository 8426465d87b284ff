/* The process's thread pool: what the parallel loops of generated code run on (glue module).
 *
 * Kernels hand a loop body and a block count to tg_run (runtime.h), which calls tg_pool_run
 * through tg_ctx.pool_run: a *job* of n blocks. The caller publishes the job and then claims
 * blocks itself, like any worker; it only ever waits for blocks a worker has already claimed,
 * never for a worker that has not started. A team in the OpenMP manner (every thread runs its
 * share, the caller waits for all of them) makes the caller wait, on a busy machine, for a
 * worker the scheduler has not run yet (a time slice, milliseconds, for a loop of
 * microseconds), and its idle workers spin for a long while, taking CPU from the very
 * processes that keep the machine busy: measured on 2 cores with 2 CPU-bound processes beside
 * it, libgomp's team took the seed step's median from 13 us to 29 us and its worst batch to
 * 325 times its median; with this pool, under the same load, 35-51 us against numpy's 50-74,
 * the worst batch 1.08 times the median (2026-11-25 at 7fa313e).
 *
 * Workers spin a short while after a job (back-to-back loops of a training step find them
 * awake), then sleep on a futex. When recent jobs were all run by the caller alone (the
 * workers did not get a CPU in time), the caller stops ringing for a while and runs jobs alone:
 * a busy machine gets one thread's speed without the wake-ups, and the pool tries again later.
 * How long, how many and whether workers change CPU are tg_pool's tuning fields, set from
 * config.pool__* by tg_pool_configure (configdefaults.py says what each measurement chose).
 *
 * Claiming is one compare-and-swap on `state` (job number, block count, next block), so a
 * worker that read a job's body and arguments can only claim a block of that same job.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1   /* CPU sets, sched_getcpu */
#endif
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TG_POOL_MAX_WORKERS 63

#define TG_POOL_GEN(s) ((uint32_t)((s) >> 32))
#define TG_POOL_COUNT(s) ((int)(((s) >> 16) & 0xffff))
#define TG_POOL_NEXT(s) ((int)((s) & 0xffff))

static struct {
    pthread_mutex_t grow;           /* held while starting workers */
    int nworkers;
    int atfork;                     /* the fork handler is registered */
    uint64_t state;                 /* job << 32 | blocks << 16 | next block */
    tg_block_fn fn;                 /* the job's body and argument, written before `state` */
    void *arg;
    int done;                       /* blocks of the job finished */
    uint32_t bell;                  /* futex word, rung once per job that wakes workers */
    int sleeping;                   /* workers waiting on `bell` */
    int busy;                       /* a caller owns the pool (else regions run alone) */
    int caller_cpu;                 /* the CPU the caller published the job from */
    int absent;                     /* jobs in a row the workers were absent from */
    int pause, pause_left;          /* jobs to run alone before ringing again */
    double rang;                    /* when sleeping workers were woken and none came yet */
    /* counters for tests and benchmarks (jobs published, blocks run by workers, jobs run
     * alone because the workers were absent or another caller owned the pool) */
    int64_t jobs, worker_blocks, alone;
    /* tuning (tg_pool_configure): how long an idle worker watches for the next job before it
     * sleeps (seconds); a worker is *absent* from a job the caller ran alone when it was awake
     * (spinning) at the job's start, or was woken more than late_seconds before and has not
     * run yet (the scheduler gives it no CPU); after absent_jobs such jobs in a row the caller
     * runs jobs alone without ringing, first_pause at first, twice as many each time up to
     * max_pause; move_cpus: a worker starts away from its creator's CPU and leaves the
     * caller's CPU when woken there */
    double spin_seconds, late_seconds;
    int absent_jobs, first_pause, max_pause, move_cpus;
} tg_pool = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, NULL, NULL, 0, 0, 0, 0, -1, 0, 0, 0, 0.0, 0, 0, 0,
             0.0, 0.0, 1, 0, 0, 0};   /* tuning: set by tg_pool_configure before any job */

/* Set the tuning fields (config.pool__*; codegen.py calls it whenever it makes a workspace).
 * Workers read spin_seconds and move_cpus; the rest only the caller that owns the pool. */
TG_COLD void tg_pool_configure(double spin_seconds, double late_seconds, int absent_jobs,
                               int first_pause, int max_pause, int move_cpus)
{
    __atomic_store(&tg_pool.spin_seconds, &spin_seconds, __ATOMIC_RELAXED);
    __atomic_store_n(&tg_pool.move_cpus, move_cpus, __ATOMIC_RELAXED);
    if (__atomic_exchange_n(&tg_pool.busy, 1, __ATOMIC_ACQUIRE) != 0) return;  /* in a job */
    tg_pool.late_seconds = late_seconds;
    tg_pool.absent_jobs = absent_jobs < 1 ? 1 : absent_jobs;
    tg_pool.first_pause = first_pause < 0 ? 0 : first_pause;
    tg_pool.max_pause = max_pause < tg_pool.first_pause ? tg_pool.first_pause : max_pause;
    if (tg_pool.pause < tg_pool.first_pause || tg_pool.pause > tg_pool.max_pause)
        tg_pool.pause = tg_pool.first_pause;
    __atomic_store_n(&tg_pool.busy, 0, __ATOMIC_RELEASE);
}

static inline void tg_pool_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Run every block of job `gen` that is still unclaimed; returns how many this thread ran. */
static int tg_pool_claim(uint32_t gen)
{
    tg_block_fn fn = __atomic_load_n(&tg_pool.fn, __ATOMIC_ACQUIRE);
    void *arg = __atomic_load_n(&tg_pool.arg, __ATOMIC_ACQUIRE);
    int ran = 0;
    uint64_t s = __atomic_load_n(&tg_pool.state, __ATOMIC_ACQUIRE);
    while (TG_POOL_GEN(s) == gen && TG_POOL_NEXT(s) < TG_POOL_COUNT(s)) {
        /* a successful swap proves the job was still open, so fn and arg were its own */
        if (__atomic_compare_exchange_n(&tg_pool.state, &s, s + 1, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            fn(arg, TG_POOL_NEXT(s), TG_POOL_COUNT(s));
            __atomic_add_fetch(&tg_pool.done, 1, __ATOMIC_RELEASE);
            ran++;
            s = __atomic_load_n(&tg_pool.state, __ATOMIC_ACQUIRE);
        }
    }
    return ran;
}

/* The next job after `seen`: spin a little, then sleep until the bell rings. The spin yields
 * the CPU every few microseconds, so on a busy CPU the caller (or another process) runs
 * instead of a worker that has nothing to do. */
static uint32_t tg_pool_next_job(uint32_t seen)
{
    uint64_t s;
    double spin;
    __atomic_load(&tg_pool.spin_seconds, &spin, __ATOMIC_RELAXED);
    const double until = tg_now() + spin;
    for (int i = 1;; i++) {
        s = __atomic_load_n(&tg_pool.state, __ATOMIC_ACQUIRE);
        if (TG_POOL_GEN(s) != seen) return TG_POOL_GEN(s);
        tg_pool_relax();
        if ((i & 63) == 0) {
            if (tg_now() > until) break;
            sched_yield();
        }
    }
    for (;;) {
        /* read the bell before looking at the job: a job published after the look rings a
         * bell that no longer has this value, so the wait returns at once */
        const uint32_t bell = __atomic_load_n(&tg_pool.bell, __ATOMIC_SEQ_CST);
        __atomic_add_fetch(&tg_pool.sleeping, 1, __ATOMIC_SEQ_CST);
        s = __atomic_load_n(&tg_pool.state, __ATOMIC_SEQ_CST);
        if (TG_POOL_GEN(s) == seen)
            syscall(SYS_futex, &tg_pool.bell, FUTEX_WAIT_PRIVATE, bell, NULL, NULL, 0);
        __atomic_sub_fetch(&tg_pool.sleeping, 1, __ATOMIC_SEQ_CST);
        s = __atomic_load_n(&tg_pool.state, __ATOMIC_ACQUIRE);
        if (TG_POOL_GEN(s) != seen) return TG_POOL_GEN(s);
    }
}

/* The CPUs the workers may use (the creating thread's mask); a new worker starts away from its
 * creator's CPU, then takes the whole mask: left to the scheduler, a new thread starts on its
 * creator's CPU and, since the caller never sleeps in a region and the worker yields while it
 * spins, it could stay there for milliseconds, sharing one CPU with the caller. */
static cpu_set_t tg_pool_cpus;

/* A worker woken on the CPU its caller runs on can only run when the caller stops: on
 * machines whose CPUs share no cache the scheduler may leave it there (measured: the seed
 * step at one thread's speed for a whole benchmark). It moves to another CPU of the mask. */
static TG_COLD void tg_pool_leave_cpu(int cpu)
{
    if (CPU_COUNT(&tg_pool_cpus) < 2 || !CPU_ISSET(cpu, &tg_pool_cpus)) return;
    cpu_set_t away = tg_pool_cpus;
    CPU_CLR(cpu, &away);
    pthread_setaffinity_np(pthread_self(), sizeof(away), &away);
    pthread_setaffinity_np(pthread_self(), sizeof(tg_pool_cpus), &tg_pool_cpus);
}

static void *tg_pool_worker(void *unused)
{
    (void)unused;
    pthread_setaffinity_np(pthread_self(), sizeof(tg_pool_cpus), &tg_pool_cpus);
    uint32_t seen = TG_POOL_GEN(__atomic_load_n(&tg_pool.state, __ATOMIC_ACQUIRE));
    for (;;) {
        seen = tg_pool_next_job(seen);
        const int cpu = __atomic_load_n(&tg_pool.move_cpus, __ATOMIC_RELAXED) ? sched_getcpu()
                                                                             : -1;
        if (cpu >= 0 && cpu == __atomic_load_n(&tg_pool.caller_cpu, __ATOMIC_RELAXED))
            tg_pool_leave_cpu(cpu);
        const int ran = tg_pool_claim(seen);
        if (ran) __atomic_add_fetch(&tg_pool.worker_blocks, ran, __ATOMIC_RELAXED);
    }
    return NULL;
}

/* In a child process made by fork() the workers are gone: start afresh. */
static void tg_pool_after_fork(void)
{
    pthread_mutex_init(&tg_pool.grow, NULL);
    tg_pool.nworkers = 0;
    tg_pool.sleeping = 0;
    tg_pool.busy = 0;
    tg_pool.done = 0;
    tg_pool.state = 0;
    tg_pool.absent = 0;
    tg_pool.pause = tg_pool.first_pause;
    tg_pool.pause_left = 0;
    tg_pool.rang = 0.0;
}

/* Make sure `want` workers exist (as many as could be started: fewer only costs speed).
 * Workers block every signal: Python handles them in its main thread. */
static TG_COLD void tg_pool_grow(int want)
{
    if (want > TG_POOL_MAX_WORKERS) want = TG_POOL_MAX_WORKERS;
    pthread_mutex_lock(&tg_pool.grow);
    if (!tg_pool.atfork) tg_pool.atfork = pthread_atfork(NULL, NULL, tg_pool_after_fork) == 0;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    cpu_set_t away;
    const int here = sched_getcpu();
    int spread = pthread_getaffinity_np(pthread_self(), sizeof(tg_pool_cpus), &tg_pool_cpus) == 0
                 && here >= 0 && CPU_COUNT(&tg_pool_cpus) > 1 && tg_pool.move_cpus;
    if (spread) {
        away = tg_pool_cpus;
        CPU_CLR(here, &away);
    }
    while (__atomic_load_n(&tg_pool.nworkers, __ATOMIC_ACQUIRE) < want) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        if (spread) pthread_attr_setaffinity_np(&attr, sizeof(away), &away);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 1 << 20);
        const int rc = pthread_create(&t, &attr, tg_pool_worker, NULL);
        pthread_attr_destroy(&attr);
        if (rc != 0) break;
        __atomic_add_fetch(&tg_pool.nworkers, 1, __ATOMIC_RELEASE);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_mutex_unlock(&tg_pool.grow);
}

/* Run blocks 0..n-1 of `fn` (each once, in any order, on up to n threads: the caller and
 * n - 1 workers); returns when all have run. */
static void tg_pool_run(tg_block_fn fn, void *arg, int n)
{
    const int alone = n <= 1 || n > 0xffff
                      || __atomic_exchange_n(&tg_pool.busy, 1, __ATOMIC_ACQUIRE) != 0;
    if (alone) {
        if (n > 1) __atomic_add_fetch(&tg_pool.alone, 1, __ATOMIC_RELAXED);
        for (int k = 0; k < n; k++) fn(arg, k, n);
        return;
    }
    if (tg_pool.pause_left > 0) {           /* the workers were absent lately */
        tg_pool.pause_left--;
        __atomic_add_fetch(&tg_pool.alone, 1, __ATOMIC_RELAXED);
        for (int k = 0; k < n; k++) fn(arg, k, n);
        __atomic_store_n(&tg_pool.busy, 0, __ATOMIC_RELEASE);
        return;
    }
    if (__atomic_load_n(&tg_pool.nworkers, __ATOMIC_ACQUIRE) < n - 1
        && tg_pool.nworkers < TG_POOL_MAX_WORKERS)
        tg_pool_grow(n - 1);
    __atomic_store_n(&tg_pool.caller_cpu, sched_getcpu(), __ATOMIC_RELAXED);
    __atomic_store_n(&tg_pool.fn, fn, __ATOMIC_RELAXED);
    __atomic_store_n(&tg_pool.arg, arg, __ATOMIC_RELAXED);
    __atomic_store_n(&tg_pool.done, 0, __ATOMIC_RELAXED);
    const uint32_t gen = TG_POOL_GEN(__atomic_load_n(&tg_pool.state, __ATOMIC_RELAXED)) + 1;
    __atomic_store_n(&tg_pool.state, ((uint64_t)gen << 32) | ((uint64_t)n << 16),
                     __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&tg_pool.bell, 1, __ATOMIC_SEQ_CST);
    const int asleep = __atomic_load_n(&tg_pool.sleeping, __ATOMIC_SEQ_CST) > 0;
    if (asleep) {
        syscall(SYS_futex, &tg_pool.bell, FUTEX_WAKE_PRIVATE, n - 1, NULL, NULL, 0);
        if (tg_pool.rang == 0.0) tg_pool.rang = tg_now();
    }
    tg_pool.jobs++;
    const int mine = tg_pool_claim(gen);
    /* only blocks a worker claimed can be left: it is running them */
    for (int i = 0; __atomic_load_n(&tg_pool.done, __ATOMIC_ACQUIRE) < n; i++) {
        if ((i & 255) != 255) tg_pool_relax();
        else sched_yield();                 /* let a worker that shares this CPU finish */
    }
    if (mine < n) {
        tg_pool.absent = 0;
        tg_pool.pause = tg_pool.first_pause;
        tg_pool.rang = 0.0;
    } else if ((!asleep || tg_now() - tg_pool.rang > tg_pool.late_seconds)
               && ++tg_pool.absent >= tg_pool.absent_jobs) {
        tg_pool.absent = 0;
        tg_pool.pause_left = tg_pool.pause;
        tg_pool.rang = 0.0;
        tg_pool.pause = tg_pool.pause * 2 < tg_pool.max_pause ? tg_pool.pause * 2
                                                              : tg_pool.max_pause;
    }
    __atomic_store_n(&tg_pool.busy, 0, __ATOMIC_RELEASE);
}

/* The pool's counters (for tests and benchmarks): workers, jobs published, blocks run by
 * workers, regions run alone (workers absent lately, or the pool owned by another caller). */
void tg_pool_stats(int64_t *out)
{
    out[0] = __atomic_load_n(&tg_pool.nworkers, __ATOMIC_RELAXED);
    out[1] = __atomic_load_n(&tg_pool.jobs, __ATOMIC_RELAXED);
    out[2] = __atomic_load_n(&tg_pool.worker_blocks, __ATOMIC_RELAXED);
    out[3] = __atomic_load_n(&tg_pool.alone, __ATOMIC_RELAXED);
}
