"""One SGD step of a tanh RNN trained by back-propagation through time over 100 steps (batch
32, 256 inputs, 256 hidden, float32; the loss on the last hidden state). See _rnn.py."""

from cases import _rnn

NAME = "rnn_train"
TITLE = "RNN train step (BPTT) {0} steps, {1}x{2}-{3} f32"
TARGET = ("numpy", 0.6)
TARGETS = [("numpy", 0.6), ("pytensor", 0.5)]   # both must hold (issue 22)
size = _rnn.size


def make_tensorgraph(size, mode="FAST_RUN"):
    f, args = _rnn.tensorgraph_functions(size, train=True, mode=mode)
    return lambda: f(*args)


def make_numpy(size):
    return _rnn.numpy_train(size)


def make_pytensor(size):
    return _rnn.pytensor_function(size, train=True)


def make_jax(size):
    return _rnn.jax_function(size, train=True)
