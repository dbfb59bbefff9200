"""The model.py of a Triton Inference Server model written by `odlac export-triton`.

Triton's Python backend runs this file in a stub process per model instance. It loads the
compiled model of its own folder (libnet.so, net.json and the ODLA backend library that
export-triton copied beside it) through odlac.py, the odlac package's module copied there too,
so that the repository needs nothing of odlac's installed. With dynamic batching (a model
compiled with --dynamic-batch), the requests Triton gathers run as one batch: their rows
are joined, run by net_run_batch in one call, and split again. docs/serving.md says more."""
import glob
import os
import sys

import numpy as np
import triton_python_backend_utils as pb_utils

HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path[:1] != [HERE]:
    sys.path.insert(0, HERE)
from odlac import Model  # noqa: E402  (this folder's odlac.py)


class TritonPythonModel:
    def initialize(self, args):
        libraries = sorted(glob.glob(os.path.join(HERE, "libodla_*.so")))
        if len(libraries) != 1:
            raise pb_utils.TritonModelException(
                "%s: expected one libodla_*.so beside model.py, found %d" % (HERE, len(libraries)))
        self.model = Model(HERE, libraries[0])
        self.inputs = [t.name for t in self.model.get_inputs()]
        self.outputs = [t.name for t in self.model.get_outputs()]

    def _respond(self, outs):
        return pb_utils.InferenceResponse(
            output_tensors=[pb_utils.Tensor(n, o) for n, o in zip(self.outputs, outs)])

    @staticmethod
    def _failed(error):
        return pb_utils.InferenceResponse(output_tensors=[], error=pb_utils.TritonError(str(error)))

    def execute(self, requests):
        feeds = [{n: pb_utils.get_input_tensor_by_name(r, n).as_numpy() for n in self.inputs}
                 for r in requests]
        if not self.model.dynamic_batch or len(requests) == 1:
            responses = []
            for f in feeds:
                try:
                    responses.append(self._respond(self.model.run(None, f)))
                except (ValueError, KeyError, RuntimeError) as e:
                    responses.append(self._failed(e))
            return responses
        # One run for every request's rows; each request gets its own rows back.
        rows = [f[self.inputs[0]].shape[0] for f in feeds]
        try:
            joined = {n: np.concatenate([f[n] for f in feeds]) for n in self.inputs}
            outs = self.model.run(None, joined)
        except (ValueError, KeyError, RuntimeError) as e:
            return [self._failed(e) for _ in requests]
        bounds = np.cumsum([0] + rows)
        return [self._respond([o[bounds[i]:bounds[i + 1]] for o in outs])
                for i in range(len(requests))]

    def finalize(self):
        self.model.close()
