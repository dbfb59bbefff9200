// Builds small ONNX models in C++ for frontend tests, and writes them to temp files.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace odlac::test {

inline onnx::ValueInfoProto tensorInfo(const std::string &name, int elemType,
                                       const std::vector<int64_t> &dims,
                                       const std::vector<std::string> &symbolic = {}) {
  onnx::ValueInfoProto vi;
  vi.set_name(name);
  auto *tt = vi.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elemType);
  auto *shape = tt->mutable_shape();
  for (size_t i = 0; i < dims.size(); ++i) {
    auto *d = shape->add_dim();
    if (i < symbolic.size() && !symbolic[i].empty())
      d->set_dim_param(symbolic[i]);
    else
      d->set_dim_value(dims[i]);
  }
  return vi;
}

inline onnx::TensorProto floatTensor(const std::string &name, const std::vector<int64_t> &dims,
                                     const std::vector<float> &values, bool raw) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims)
    t.add_dims(d);
  if (raw)
    t.set_raw_data(std::string(reinterpret_cast<const char *>(values.data()), values.size() * 4));
  else
    for (float v : values)
      t.add_float_data(v);
  return t;
}

inline onnx::NodeProto node(const std::string &op, const std::vector<std::string> &inputs,
                            const std::vector<std::string> &outputs, const std::string &name = "") {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(name);
  for (const auto &i : inputs)
    n.add_input(i);
  for (const auto &o : outputs)
    n.add_output(o);
  return n;
}

inline onnx::TensorProto int64Tensor(const std::string &name, const std::vector<int64_t> &dims,
                                     const std::vector<int64_t> &values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims)
    t.add_dims(d);
  for (int64_t v : values)
    t.add_int64_data(v);
  return t;
}

inline void addFloatAttr(onnx::NodeProto &n, const std::string &name, float v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

inline void addIntsAttr(onnx::NodeProto &n, const std::string &name,
                        const std::vector<int64_t> &v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v)
    a->add_ints(x);
}

inline void addIntAttr(onnx::NodeProto &n, const std::string &name, int64_t v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

inline void addStringAttr(onnx::NodeProto &n, const std::string &name, const std::string &v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

inline onnx::ModelProto model(int opset) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("odlac-test");
  auto *os = m.add_opset_import();
  os->set_domain("");
  os->set_version(opset);
  m.mutable_graph()->set_name("test");
  return m;
}

// A fresh folder under the system temp dir, for one test.
std::string tempDir();

inline std::string save(const onnx::ModelProto &m, const std::string &dir,
                        const std::string &file = "model.onnx") {
  std::string path = dir + "/" + file;
  std::ofstream out(path, std::ios::binary);
  m.SerializeToOstream(&out);
  return path;
}

} // namespace odlac::test
