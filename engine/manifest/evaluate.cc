#include "engine/manifest/evaluate.h"

#include <algorithm>

#include "base/private_key.h"

namespace cairn {
namespace {

// each.value, or each.value.FIELD.SUBFIELD; null when a field is missing.
const Value* EachField(const Value* cur, const std::string& path) {
  size_t pos = 0;
  while (cur && !path.empty() && pos <= path.size()) {
    size_t dot = path.find('.', pos);
    std::string field = path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    cur = (cur->is_object() && cur->contains(field)) ? &(*cur)[field] : nullptr;
    if (dot == std::string::npos) break;
    pos = dot + 1;
  }
  return cur;
}

// Why reference `e` may not appear here, or "" when it may.
std::string RefusedReference(const Expression& e, const EvalInputs& in, bool exact,
                             std::string& code, std::string& detail) {
  if (!in.resource_refs) {
    code = "reference_not_allowed";
    detail = "use a variable or a literal value here";
    return std::string(in.where) + " cannot refer to " + e.ToString() +
           (e.type == Expression::Type::kModuleOutput
                ? ": a module's outputs are known only when the stack is loaded"
                : ": resource attributes are known only during apply");
  }
  if (e.type == Expression::Type::kResource && !in.module.empty() &&
      e.target.kind.rfind("data.", 0) == 0) {
    code = "module_data_reference";
    detail =
        "data sources belong to the stack: pass ${" + e.ToString() + "} to the module as an input";
    return "a module cannot read the stack's data source " + e.target.BaseString();
  }
  if (e.type == Expression::Type::kResource && !e.target.module.empty()) {
    code = "module_internal_reference";
    detail = "refer to one of the module's outputs: ${module.NAME.OUTPUT}";
    return "cannot refer to " + e.ToString() + ": a module's resources are its own";
  }
  if (e.splat && !exact) {
    code = "splat_in_string";
    detail = "use it as the whole value: \"${" + e.ToString() + "}\"";
    return "cannot interpolate " + e.ToString() + ", a list, into a string";
  }
  return "";
}

bool HoldsPrivateKey(const Value& v) {
  if (v.is_string()) return FindPrivateKey(v.get_ref<const std::string&>()).found();
  if (v.is_structured()) return std::any_of(v.begin(), v.end(), HoldsPrivateKey);
  return false;
}

}  // namespace

bool IsEnvName(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

Value EscapeTemplateValue(const Value& v) {
  if (v.is_string()) return EscapeTemplateLiteral(v.get_ref<const std::string&>());
  if (v.is_array()) {
    Value out = Value::array();
    for (const auto& i : v) out.push_back(EscapeTemplateValue(i));
    return out;
  }
  if (v.is_object()) {
    Value out = Value::object();
    for (auto it = v.begin(); it != v.end(); ++it) out[it.key()] = EscapeTemplateValue(*it);
    return out;
  }
  return v;
}

Evaluated EvaluateString(const std::string& text, const EvalInputs& in,
                         const std::function<SourceLocation(size_t, size_t)>& locate,
                         std::vector<Diagnostic>& diags) {
  Evaluated result;
  auto parsed = ParseTemplate(text);
  if (auto* err = std::get_if<TemplateError>(&parsed)) {
    AddError(diags, "invalid_expression", err->message, locate(err->offset, err->length));
    result.value = text;
    result.failed = true;
    return result;
  }
  auto& t = std::get<Template>(parsed);
  const bool exact = t.exact();
  bool keeps_refs = false;
  std::string out;
  Value exact_value;
  for (auto& part : t.parts) {
    if (auto* lit = std::get_if<std::string>(&part)) {
      out += EscapeTemplateLiteral(*lit);
      continue;
    }
    const Expression& e = std::get<Expression>(part);
    SourceLocation at = locate(e.begin, e.end - e.begin);
    std::optional<Value> v;
    switch (e.type) {
      case Expression::Type::kVar:
        if (in.variable) v = in.variable(e.name, at);
        if (v && in.variable_sensitive && in.variable_sensitive(e.name) &&
            std::find(result.sensitive.begin(), result.sensitive.end(), e.name) ==
                result.sensitive.end()) {
          result.sensitive.push_back(e.name);
        }
        break;
      case Expression::Type::kEnv: {
        const char* env = in.getenv ? in.getenv(e.name.c_str()) : nullptr;
        if (!IsEnvName(e.name)) {
          AddError(diags, "invalid_expression",
                   "\"" + e.name + "\" is not an environment variable name", at);
        } else if (!env) {
          AddError(diags, "unset_env", "environment variable " + e.name + " is not set", at);
        } else if (FindPrivateKey(env).found()) {
          AddError(diags, "private_key_material",
                   "private key material in environment variable " + e.name, at,
                   "only public keys belong in a stack; the key is not shown");
        } else {
          v = Value(EscapeTemplateLiteral(env));
        }
        break;
      }
      case Expression::Type::kCountIndex:
        if (in.count_index) {
          v = Value(*in.count_index);
        } else {
          AddError(diags, "count_outside_count",
                   "count.index is only available in a resource with count", at);
        }
        break;
      case Expression::Type::kEachKey:
      case Expression::Type::kEachValue:
        if (!in.each_key) {
          AddError(diags, "each_outside_for_each",
                   e.ToString() + " is only available in a resource with for_each", at);
        } else if (e.type == Expression::Type::kEachKey) {
          v = Value(EscapeTemplateLiteral(*in.each_key));
        } else if (const Value* field = EachField(in.each_value, e.name)) {
          v = EscapeTemplateValue(*field);
        } else {
          AddError(diags, "unknown_each_field",
                   "each.value has no field \"" + e.name + "\" for key \"" + *in.each_key + "\"",
                   at);
        }
        break;
      case Expression::Type::kFile:
        if (in.read_file) {
          if (auto content = in.read_file(e.name, at)) v = Value(EscapeTemplateLiteral(*content));
        }
        break;
      case Expression::Type::kResource:
      case Expression::Type::kModuleOutput: {
        std::string code, detail;
        if (std::string why = RefusedReference(e, in, exact, code, detail); !why.empty()) {
          AddError(diags, code, why, at, detail);
          result.failed = true;
          break;
        }
        // Inside a module, names are the module's own: its path goes in front.
        Expression whole = e;
        whole.target.module.insert(whole.target.module.begin(), in.module.begin(), in.module.end());
        keeps_refs = true;
        out += "${" + whole.ToString() + "}";
        result.references.push_back({std::move(whole), at, exact});
        continue;
      }
    }
    if (!v) {
      result.failed = true;
      continue;
    }
    if (exact) {
      exact_value = std::move(*v);
    } else if (v->is_structured()) {
      AddError(diags, "invalid_interpolation",
               "cannot interpolate " + e.ToString() + ", " + ValueTypeNoun(*v) + ", into a string",
               at, "use it as the whole value: \"${" + e.ToString() + "}\"");
      result.failed = true;
    } else {
      out += InterpolationText(*v);
    }
  }
  if (result.failed) {
    result.value = text;  // left as written (reported)
  } else if (exact && !keeps_refs) {
    result.value = std::move(exact_value);
  } else {
    result.value = std::move(out);
  }
  // Each input was checked where it was read (the manifest, a file, the
  // environment), but pieces of a key are not keys: the value they make is
  // checked too. A key written in the string itself was reported with its
  // manifest.
  if (!result.failed && HoldsPrivateKey(result.value) && !FindPrivateKey(text).found()) {
    AddError(diags, "private_key_material", "private key material in a value",
             locate(0, text.size()),
             "it was assembled from variables, for_each values or files; only public keys belong "
             "in a stack, and the key is not shown");
    result.value = text;
    result.failed = true;
    result.private_key = true;
  }
  return result;
}

}  // namespace cairn
