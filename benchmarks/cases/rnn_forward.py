"""A tanh RNN's forward pass over 100 steps (batch 32, 256 inputs, 256 hidden, float32): the
last hidden state. See _rnn.py."""

from cases import _rnn

NAME = "rnn_forward"
TITLE = "RNN forward {0} steps, {1}x{2}-{3} f32"
TARGET = ("numpy", None)    # the issue sets a target for the training step only
size = _rnn.size


def make_tensorgraph(size, mode="FAST_RUN"):
    f, args = _rnn.tensorgraph_functions(size, train=False, mode=mode)
    return lambda: f(*args)


def make_numpy(size):
    return _rnn.numpy_forward(size)


def make_pytensor(size):
    return _rnn.pytensor_function(size, train=False)


def make_jax(size):
    return _rnn.jax_function(size, train=False)
