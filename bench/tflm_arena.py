"""TFLite Micro's arena for the MLPerf Tiny models of bench/tiny_models.py, measured: the same
architectures built in Keras (random weights; batch norms with random statistics as there, so
that activations keep their range through the layers), converted to int8 TFLite by TensorFlow's
converter (full-integer post-training quantization over 8 random inputs, as MLPerf Tiny's
reference models are), loaded by the tflite-micro interpreter from PyPI, whose recording
allocator prints the arena it used. The arena depends on the tensors' shapes and types, not on
the weights' values. Run by bench/embedded.py with the TFLite Micro venv's Python
(scripts/install-deps.sh venv-path tflm):

    python tflm_arena.py NAME

prints the allocator's lines on stderr ("Arena allocation total N bytes", "head", "tail", and
what the tail holds). The interpreter is TFLite Micro's x86-64 build: its persistent structures
(the tail) hold 8-byte pointers, larger than a 32-bit core's, and it runs the reference kernels,
which need no scratch (CMSIS-NN's convolutions ask the arena for an im2col buffer)."""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow import keras  # noqa: E402
from tflite_micro.python.tflite_micro import runtime  # noqa: E402

L = keras.layers
U = keras.initializers.RandomUniform


def bn():
    return L.BatchNormalization(gamma_initializer=U(0.5, 1.5), moving_mean_initializer=U(-0.2, 0.2),
                                moving_variance_initializer=U(0.5, 1.5))


def bn_relu(x):
    return L.ReLU()(bn()(x))


def kws(c=64):
    i = keras.Input((49, 10, 1))
    x = bn_relu(L.Conv2D(c, (10, 4), strides=2)(L.ZeroPadding2D(((5, 5), (1, 1)))(i)))
    for _ in range(4):
        x = bn_relu(L.DepthwiseConv2D(3, padding="same")(x))
        x = bn_relu(L.Conv2D(c, 1)(x))
    return keras.Model(i, L.Softmax()(L.Dense(12)(L.GlobalAveragePooling2D()(x))))


def block(x, cin, cout, stride):
    y = bn_relu(L.Conv2D(cout, 3, stride, padding="same")(x))
    y = bn()(L.Conv2D(cout, 3, padding="same")(y))
    short = x if stride == 1 and cin == cout else L.Conv2D(cout, 1, stride)(x)
    return L.ReLU()(L.Add()([y, short]))


def ic():
    i = keras.Input((32, 32, 3))
    x = bn_relu(L.Conv2D(16, 3, padding="same")(i))
    x = block(block(block(x, 16, 16, 1), 16, 32, 2), 32, 64, 2)
    return keras.Model(i, L.Softmax()(L.Dense(10)(L.GlobalAveragePooling2D()(x))))


def vww(alpha=0.25):
    i = keras.Input((96, 96, 3))
    x = bn_relu(L.Conv2D(int(32 * alpha), 3, 2, padding="same")(i))
    for cout, stride in ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1),
                         (512, 1), (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1)):
        x = bn_relu(L.DepthwiseConv2D(3, stride, padding="same")(x))
        x = bn_relu(L.Conv2D(int(cout * alpha), 1)(x))
    return keras.Model(i, L.Softmax()(L.Dense(2)(L.GlobalAveragePooling2D()(x))))


def ad(n=640, hidden=128, code=8):
    i = keras.Input((n,))
    x = i
    for width in (hidden, hidden, hidden, hidden, code, hidden, hidden, hidden, hidden):
        x = bn_relu(L.Dense(width)(x))
    return keras.Model(i, L.Dense(n)(x))


MODELS = {"kws": kws, "ic": ic, "vww": vww, "ad": ad}


def int8_tflite(model):
    shape = model.input_shape[1:]
    rng = np.random.default_rng(1)

    def calibration():
        for _ in range(8):
            yield [rng.standard_normal((1, *shape)).astype(np.float32)]

    c = tf.lite.TFLiteConverter.from_keras_model(model)
    c.optimizations = [tf.lite.Optimize.DEFAULT]
    c.representative_dataset = calibration
    c.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    c.inference_input_type = c.inference_output_type = tf.int8
    return c.convert()


def main():
    keras.utils.set_random_seed(0)
    flat = int8_tflite(MODELS[sys.argv[1]]())
    interpreter = runtime.Interpreter.from_bytes(flat, arena_size=1 << 20)
    interpreter.print_allocations()


if __name__ == "__main__":
    main()
