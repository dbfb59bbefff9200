"""Hostile ai.onnx.ml TreeEnsemble-5 nodes: every index in the attributes out of range (feature
ids, node and leaf ids of the branches, target ids, tree roots), branches that form a cycle,
nodes_* and leaf_* lists of different lengths, modes, flags, aggregate and post_transform
codes outside the spec, member sets that do not match the BRANCH_MEMBER nodes, an empty
tree_roots, and the legacy TreeEnsembleRegressor and TreeEnsembleClassifier: each refused at compile time with the node, the attribute and
the numbers, leaving nothing behind. A chain of 100,000 nodes and a ladder of nodes each reached
from two parents (2^60 paths to walk for a naive evaluator) compile and run in linear time. A
stored executable whose nodes table is edited to branch backwards is refused by the loader."""
import os
import subprocess

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import hostile

import loader_edits
import test_loader  # the stored-file walker

HERE = os.path.dirname(os.path.abspath(__file__))


def tensor(values, dtype=np.float32):
    return numpy_helper.from_array(np.array(values, dtype))


# One tree over X [N, 3]: node 0 (x0 <= 0.5) to node 1 or leaf 0; node 1 (x1 > 0) to leaf 1
# or leaf 2. Targets 0 and 1.
BASE = dict(nodes_modes=tensor([0, 3], np.uint8), nodes_featureids=[0, 1],
            nodes_splits=tensor([0.5, 0.0]), nodes_truenodeids=[1, 1], nodes_trueleafs=[0, 1],
            nodes_falsenodeids=[0, 2], nodes_falseleafs=[1, 1], leaf_targetids=[0, 1, 0],
            leaf_weights=tensor([1.0, 2.0, 4.0]), tree_roots=[0], n_targets=2)


def model(attrs, features=3, declared=None, op="TreeEnsemble", opset=5):
    node = h.make_node(op, ["x"], ["y"], name="trees", domain="ai.onnx.ml", **attrs)
    graph = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, [2, features])],
                         [h.make_tensor_value_info("y", T.FLOAT, declared)])
    return h.make_model(graph, ir_version=10, opset_imports=[h.make_opsetid("", 21),
                                                             h.make_opsetid("ai.onnx.ml", opset)])


def edited(**changes):
    attrs = dict(BASE)
    attrs.update(changes)
    return model({k: v for k, v in attrs.items() if v is not None})


class TreeEnsembleTest(hostile.HostileCase):
    def refusedTree(self, m, *fragments):
        return self.refused(m, "node 'trees' (ai.onnx.ml.TreeEnsemble, opset 5)", *fragments)

    def test_feature_id_past_the_inputs_last_dim(self):
        self.refusedTree(edited(nodes_featureids=[0, 3]),
                         "attribute nodes_featureids[1] = 3 is not in [0, 3): the input has 3 "
                         "features")
        self.refusedTree(edited(nodes_featureids=[-1, 0]), "nodes_featureids[0] = -1 is not in")

    def test_branch_to_a_node_or_leaf_that_does_not_exist(self):
        self.refusedTree(edited(nodes_truenodeids=[2, 1]),
                         "attribute nodes_truenodeids[0] = 2 is not in [0, 2): a node (its "
                         "nodes_*leafs entry is 0) of 2 in nodes_splits")
        self.refusedTree(edited(nodes_falsenodeids=[0, 3]),
                         "attribute nodes_falsenodeids[1] = 3 is not in [0, 3): a leaf (its "
                         "nodes_*leafs entry is 1) of 3 in leaf_weights")
        self.refusedTree(edited(nodes_falsenodeids=[-5, 2]), "nodes_falsenodeids[0] = -5")

    def test_target_id_past_n_targets(self):
        self.refusedTree(edited(leaf_targetids=[0, 2, 0]),
                         "attribute leaf_targetids[1] = 2 is not in [0, 2): n_targets is 2")
        self.refusedTree(edited(n_targets=-1), "n_targets = -1 is not in [0, 2^31)")
        self.refusedTree(edited(n_targets=1 << 40), "is not in [0, 2^31)")

    def test_root_that_is_not_a_node(self):
        self.refusedTree(edited(tree_roots=[0, 2]),
                         "attribute tree_roots[1] = 2 is not in [0, 2): a node of 2")
        self.refusedTree(edited(tree_roots=[-1]), "tree_roots[0] = -1")
        m = edited()
        next(a for a in m.graph.node[0].attribute if a.name == "tree_roots").ClearField("ints")
        self.refusedTree(m, "attribute tree_roots is empty: an ensemble has at least one tree")

    def test_branches_that_form_a_cycle(self):
        # node 1's true branch back to node 0, and a node that is its own child
        self.refusedTree(edited(nodes_trueleafs=[0, 0], nodes_truenodeids=[1, 0]),
                         "attribute nodes_truenodeids[1] = 0 leads back to node 0, on the path "
                         "from tree_roots[0] = 0: a tree's branches must not form a cycle")
        self.refusedTree(edited(nodes_falseleafs=[1, 0], nodes_falsenodeids=[0, 1]),
                         "attribute nodes_falsenodeids[1] = 1 leads back to node 1")

    def test_lists_of_different_lengths(self):
        self.refusedTree(edited(nodes_featureids=[0, 1, 2]),
                         "attribute nodes_featureids has 3 entries and nodes_splits 2")
        self.refusedTree(edited(nodes_missing_value_tracks_true=[1]),
                         "attribute nodes_missing_value_tracks_true has 1 entries")
        self.refusedTree(edited(nodes_modes=tensor([0], np.uint8)),
                         "attribute nodes_modes u8[1] must be uint8 [2]")
        self.refusedTree(edited(leaf_targetids=[0, 1]),
                         "attribute leaf_targetids has 2 entries and leaf_weights 3")
        self.refusedTree(edited(nodes_hitrates=tensor([1.0])),
                         "attribute nodes_hitrates f32[1] must have 2 entries")

    def test_codes_outside_the_spec(self):
        self.refusedTree(edited(nodes_modes=tensor([0, 7], np.uint8)),
                         "attribute nodes_modes[1] = 7 is not a mode")
        self.refusedTree(edited(nodes_modes=tensor([0, 1], np.int64)), "must be uint8 [2]")
        self.refusedTree(edited(nodes_trueleafs=[0, 2]),
                         "attribute nodes_trueleafs[1] = 2 must be 0 or 1")
        self.refusedTree(edited(nodes_missing_value_tracks_true=[0, -1]),
                         "nodes_missing_value_tracks_true[1] = -1 must be 0 or 1")
        self.refusedTree(edited(aggregate_function=4), "aggregate_function = 4 is not one of")
        self.refusedTree(edited(post_transform=5), "post_transform = 5 is not one of")

    def test_types_other_than_the_inputs(self):
        self.refusedTree(edited(nodes_splits=tensor([0.5, 0.0], np.float64)),
                         "attribute nodes_splits f64[2] must have the input's element type f32")
        self.refusedTree(edited(leaf_weights=tensor([1, 2, 4], np.float16)),
                         "attribute leaf_weights f16[3] must have the input's element type")

    def test_member_sets_that_do_not_match_the_member_nodes(self):
        self.refusedTree(edited(nodes_modes=tensor([6, 3], np.uint8)),
                         "1 nodes are BRANCH_MEMBER and attribute membership_values is absent")
        self.refusedTree(edited(nodes_modes=tensor([6, 3], np.uint8),
                                membership_values=tensor([1.0, np.nan, 2.0, np.nan])),
                         "membership_values holds 2 NaN-ended sets")

    def test_required_attribute_absent(self):
        self.refusedTree(edited(tree_roots=None), "attribute tree_roots is required")
        self.refusedTree(edited(nodes_splits=None), "attribute nodes_splits is required")
        self.refusedTree(edited(n_targets=None), "attribute n_targets is absent and the model "
                         "declares no static shape [N, n_targets] for output 'y'")

    def test_legacy_regressor_and_classifier_refused(self):
        for op, leaves, why in (
                ("TreeEnsembleRegressor", dict(target_ids=[0], target_nodeids=[0],
                                               target_treeids=[0], target_weights=[1.0]),
                 "TreeEnsembleRegressor is not supported (leaves with several targets, "
                 "base_values)"),
                ("TreeEnsembleClassifier", dict(class_ids=[0], class_nodeids=[0],
                                                class_treeids=[0], class_weights=[1.0],
                                                classlabels_int64s=[7]),
                 "TreeEnsembleClassifier is not supported (class labels, base_values)")):
            node = h.make_node(op, ["x"], ["y"], name="legacy", domain="ai.onnx.ml",
                               nodes_treeids=[0], nodes_nodeids=[0], nodes_modes=["LEAF"],
                               **leaves)
            graph = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
                                 [h.make_tensor_value_info("y", T.FLOAT, None)])
            self.refused(h.make_model(graph, ir_version=10, opset_imports=[
                h.make_opsetid("", 21), h.make_opsetid("ai.onnx.ml", 3)]),
                "node 'legacy' (ai.onnx.ml." + op, why)

    def run_model(self, m, x):
        out = self.path("out")
        r = self.odlac(self.save(m), "-o", out, "--emit-main")
        self.assertEqual(r.returncode, 0, r.stderr)
        exe = os.path.join(out, "driver")
        self.tc.build(out, exe)
        r, outs = self.run_driver(exe, {"x": x})
        self.assertEqual(r.returncode, 0, r.stderr)
        return outs[0]

    def test_deep_chain_and_two_parent_ladder_run_in_linear_time(self):
        # A chain of 100,000 nodes, each x0 <= i to a leaf (weight i) or on to the next.
        n = 100000
        chain = dict(nodes_modes=tensor([0] * n, np.uint8), nodes_featureids=[0] * n,
                     nodes_splits=tensor(np.arange(n)), nodes_truenodeids=list(range(n)),
                     nodes_trueleafs=[1] * n, nodes_falsenodeids=list(range(1, n)) + [n],
                     nodes_falseleafs=[0] * (n - 1) + [1],
                     leaf_targetids=[0] * (n + 1), leaf_weights=tensor(np.arange(n + 1)),
                     tree_roots=[0], n_targets=1)
        x = np.array([[77777.5, 0, 0], [-3, 0, 0]], np.float32)
        got = self.run_model(model(chain), x)
        np.testing.assert_array_equal(got, [[77778], [0]])
        # A ladder of 60 nodes whose both branches lead to the next one: every node has two
        # parents, a walk is 60 steps (tree building by recursion would make 2^60 nodes).
        k = 60
        ladder = dict(nodes_modes=tensor([0] * k, np.uint8), nodes_featureids=[1] * k,
                      nodes_splits=tensor([0.0] * k), nodes_truenodeids=list(range(1, k)) + [0],
                      nodes_trueleafs=[0] * (k - 1) + [1],
                      nodes_falsenodeids=list(range(1, k)) + [1],
                      nodes_falseleafs=[0] * (k - 1) + [1], leaf_targetids=[0, 0],
                      leaf_weights=tensor([5.0, 7.0]), tree_roots=[0], n_targets=1)
        got = self.run_model(model(ladder), np.array([[0, -1, 0], [0, 1, 0]], np.float32))
        np.testing.assert_array_equal(got, [[5], [7]])

    def test_stored_executable_with_a_backward_branch_is_refused(self):
        tool = self.path("loader_tool")
        subprocess.run([self.tc.cc, "-std=c99", "-I", self.tc.include,
                        os.path.join(HERE, "loader_tool.c"), self.tc.lib, "-lm", "-o", tool],
                       check=True)
        path = self.save(edited())
        with open(loader_edits.store(self.tc, self.work, "tree", path), "rb") as f:
            s = test_loader.Stored(f.read())
        # The nodes table's constant: its data's offset in the weights, from its call.
        for name, _, _, fields in s.calls:
            at = dict(fields)
            if name != "odla_CreateConstant":
                continue
            id_at = at["i"]
            ident = bytes(s.data[id_at + 4:id_at + 4 + s.u32(id_at)])
            if ident.endswith(b"nodes"):
                offset = s.u64(at["d"])
                break
        else:
            self.fail("no nodes table among the stored constants")
        # Row 0's true branch (column 3) from row 1 to row 0: a walk that would never end.
        s.put("<i", s.weights_at + offset + 3 * 4, 0)
        r = subprocess.run([tool, "load", self.save(bytes(s.data), "x.odlx")],
                           capture_output=True, text=True, timeout=self.timeout)
        self.assertRefused(r, "(odla_ExtTreeEnsemble): ExtTreeEnsemble: node 0: branch 0 is "
                           "neither a later node", status=test_loader.INVALID_PARAM)


if __name__ == "__main__":
    hostile.main()
