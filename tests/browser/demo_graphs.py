"""Notebook cells building the graphs the browser tests, the screenshots
(``tools/screenshots.py``) and the browser benchmark show: the seed logistic regression of the
Theano tutorial and a 64-layer MLP's gradient. Kept as source text (they run in a real kernel)
in one place, so tests, pictures and measurements show the same graphs."""

SEED_CELL = '''\
%load_ext tensorgraph
import numpy as np
import tensorgraph as tg
import tensorgraph.tensor as tt
import tensorgraph.notebook as tgn
tg.config.floatX = "float32"
rng = np.random.default_rng(0)
N, feats = 400, 784
D = (rng.standard_normal((N, feats)).astype("float32"), rng.integers(0, 2, N).astype("float32"))
x, y = tt.matrix("x"), tt.vector("y")
w = tg.shared(rng.standard_normal(feats).astype("float32"), name="w")
b = tg.shared(np.float32(0.0), name="b")
p_1 = 1 / (1 + tt.exp(-tt.dot(x, w) - b))
prediction = p_1 > 0.5
xent = -y * tt.log(p_1) - (1 - y) * tt.log(1 - p_1)
cost = xent.mean() + 0.01 * (w ** 2).sum()
gw, gb = tg.grad(cost, [w, b])
train = tg.function([x, y], [prediction, xent], updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)],
                    name="train")
predict = tg.function([x], prediction, name="predict")'''

MLP_CELL = '''\
h, params = x, []
for k in range(64):
    W = tg.shared(rng.standard_normal((256, 256)).astype("float32") * 0.05, name=f"W{k}")
    c = tg.shared(np.zeros(256, dtype="float32"), name=f"c{k}")
    h = tt.tanh(tt.dot(h, W) + c)
    params += [W, c]
labels = tt.ivector("labels")
loss = tt.special.categorical_crossentropy(tt.special.softmax(h), labels).mean()
mlp_grads = tg.grad(loss, params)'''

#: the seed compiled with ``%%tg_compile`` (after SEED_CELL's imports and data): the compile
#: report's screenshots, benchmark and browser test
SEED_COMPILE_CELL = '''\
%%tg_compile train --mode FAST_RUN
x, y = tt.matrix("x"), tt.vector("y")
w = tg.shared(rng.standard_normal(feats).astype("float32"), name="w")
b = tg.shared(np.float32(0.0), name="b")
p_1 = 1 / (1 + tt.exp(-tt.dot(x, w) - b))
xent = -y * tt.log(p_1) - (1 - y) * tt.log(1 - p_1)
cost = xent.mean() + 0.01 * (w ** 2).sum()
gw, gb = tg.grad(cost, [w, b])
updates = [(w, w - 0.1 * gw), (b, b - 0.1 * gb)]
[p_1 > 0.5, xent]'''

#: a 31-layer MLP's loss and gradients compiled with ``%%tg_compile`` (after SEED_CELL): about
#: 500 nodes before rewriting, the size at which the compile report's step redraw is measured
MLP_STEPS_CELL = '''\
%%tg_compile mlp_steps --mode FAST_RUN --quiet
xm, labels = tt.matrix("xm"), tt.ivector("labels")
h, params = xm, []
for k in range(31):
    W = tg.shared(rng.standard_normal((32, 32)).astype("float32"), name=f"W{k}")
    c = tg.shared(np.zeros(32, dtype="float32"), name=f"c{k}")
    h = tt.tanh(tt.dot(h, W) + c)
    params += [W, c]
loss = tt.special.categorical_crossentropy(tt.special.softmax(h), labels).mean()
[loss, *tg.grad(loss, params)]'''
