#include "harness/definitions/op_table.h"

#include <fmt/format.h>

namespace harness {

namespace {

std::string tensor_text(const OpParameter& p) {
  std::string shape;
  for (const std::string& dim : p.shape) shape += (shape.empty() ? "" : ", ") + dim;
  return fmt::format("{} {}[{}]", p.name, p.opaque ? "bytes" : std::string(dtype_name(p.dtype)), shape);
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

std::string row(const ChallengeOps& ops, const OpDeclaration& op) {
  std::vector<std::string> scalars, inputs, outputs, results;
  for (const OpParameter& p : op.parameters) {
    switch (p.kind) {
      case ParameterKind::scalar: scalars.push_back(fmt::format("{} {}", p.name, dtype_name(p.dtype))); break;
      case ParameterKind::list: scalars.push_back(fmt::format("{} list of {}", p.name, dtype_name(p.dtype))); break;
      case ParameterKind::handle:
        for (const std::string& field : p.fields) scalars.push_back(field + " integer");
        break;
      case ParameterKind::tensor:
        (p.access == Access::in ? inputs : outputs)
            .push_back(tensor_text(p) + (p.access == Access::state ? " (state)" : ""));
        break;
      case ParameterKind::result: results.push_back(fmt::format("{} {}", p.name, dtype_name(p.dtype))); break;
      case ParameterKind::count:
      case ParameterKind::stream: break;
    }
  }
  if (op.returns) results.push_back(fmt::format("{} {}", op.returns->name, dtype_name(op.returns->dtype)));
  return fmt::format("| {} | `{}` | {} | {} | {} | {} | `{}` |\n", ops.challenge, op.name, joined(scalars),
                     joined(inputs), joined(outputs), joined(results), op.function);
}

}  // namespace

std::string op_table_markdown(const std::vector<const ChallengeOps*>& challenges) {
  std::string table =
      "| Challenge | Op | Scalars | Inputs | Outputs | Results | C function |\n"
      "|---|---|---|---|---|---|---|\n";
  for (const ChallengeOps* ops : challenges) {
    for (const OpDeclaration& op : ops->ops) table += row(*ops, op);
  }
  return table;
}

}  // namespace harness
