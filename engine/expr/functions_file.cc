// File functions: file, fileexists, filebase64, templatefile (read through
// the Scope, relative to the manifest's directory, bounded as the loader
// bounds every file it reads), and basename, dirname (text only).
#include <openssl/evp.h>

#include "engine/expr/functions.h"
#include "engine/expr/parser.h"

namespace cairn::expr {
namespace {

Value FileFn(const std::vector<Value>& a, CallContext& cx) {
  auto path = ArgString(a[0], 0, cx);
  if (!path) return Value();
  auto content = cx.scope().ReadFile(*path, *cx.call().kids[0], cx.evaluator());
  if (!content) return Value();
  return Value::String(std::move(*content));
}

Value FileExistsFn(const std::vector<Value>& a, CallContext& cx) {
  auto path = ArgString(a[0], 0, cx);
  if (!path) return Value();
  auto exists = cx.scope().FileExists(*path, *cx.call().kids[0], cx.evaluator());
  if (!exists) return Value();
  return Value::Bool(*exists);
}

Value FileBase64Fn(const std::vector<Value>& a, CallContext& cx) {
  auto path = ArgString(a[0], 0, cx);
  if (!path) return Value();
  auto content = cx.scope().ReadFile(*path, *cx.call().kids[0], cx.evaluator());
  if (!content) return Value();
  std::string out(4 * ((content->size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(content->data()),
                          static_cast<int>(content->size()));
  out.resize(static_cast<size_t>(n));
  return Value::String(std::move(out));
}

// The scope of a template file: its variables, and nothing else.
class TemplateScope : public Scope {
 public:
  explicit TemplateScope(const Map& vars) : vars_(vars) {}
  std::optional<Value> Root(const std::string& name) override {
    auto it = vars_.find(name);
    if (it == vars_.end()) return std::nullopt;
    return it->second;
  }
  Value Named(const std::string& root, const std::string& attr, const Node& at,
              Evaluator& ev) override {
    ev.Error(at, "unknown_reference",
             root + "." + attr +
                 " is not available in a template: pass it in templatefile()'s variables");
    return Value::Unknown();
  }
  Value Resource(const std::string&, const std::string& kind, const std::string& name, const Value*,
                 const std::string*, const Node& at, Evaluator& ev) override {
    ev.Error(at, "unknown_reference",
             "the template has no variable \"" + kind + "\"" +
                 (name.empty() ? "" : " (nor " + kind + "." + name + ")"),
             "a template reads only the variables templatefile() passes it");
    return Value::Unknown();
  }

 private:
  const Map& vars_;
};

// Line and column (1-based) of byte `offset` in `text`.
std::string Position(std::string_view text, uint32_t offset) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

Value TemplateFileFn(const std::vector<Value>& a, CallContext& cx) {
  auto path = ArgString(a[0], 0, cx);
  if (!path) return Value();
  const Map* vars = ArgMap(a[1], 1, cx);
  if (!vars) return Value();
  for (const auto& [name, v] : *vars) {
    bool ok =
        !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
    for (char c : name)
      ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-');
    if (!ok) {
      cx.ArgError(1, "\"" + name + "\" is not a valid variable name for a template");
      return Value();
    }
  }
  auto content = cx.scope().ReadFile(*path, *cx.call().kids[0], cx.evaluator());
  if (!content) return Value();
  ParseResult parsed = ParseTemplateWithDirectives(*content);
  if (auto* err = std::get_if<ParseError>(&parsed)) {
    cx.ArgError(0, *path + ":" + Position(*content, err->begin) + ": " + err->message);
    return Value();
  }
  TemplateScope scope(*vars);
  std::vector<EvalError> errors;
  Evaluator ev(scope, errors);
  Value v = ev.Eval(*std::get<NodePtr>(parsed));
  if (!errors.empty()) {
    const EvalError& e = errors.front();
    cx.ArgError(0, *path + ":" + Position(*content, e.begin) + ": " + e.message);
    return Value();
  }
  if (v.is_unknown()) return v;
  // The template's result is a string, whatever the one interpolation was.
  if (auto s = ToStringValue(v)) return Value::String(*s).WithMarksOf(v);
  if (v.is_null()) {
    cx.ArgError(0, *path + ": the template's value is null");
    return Value();
  }
  return v;
}

Value BaseNameFn(const std::vector<Value>& a, CallContext& cx) {
  auto p = ArgString(a[0], 0, cx);
  if (!p) return Value();
  std::string s = *p;
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  if (s.empty()) return Value::String(".");
  if (s == "/") return Value::String("/");
  size_t slash = s.rfind('/');
  return Value::String(slash == std::string::npos ? s : s.substr(slash + 1));
}

Value DirNameFn(const std::vector<Value>& a, CallContext& cx) {
  auto p = ArgString(a[0], 0, cx);
  if (!p) return Value();
  std::string s = *p;
  size_t slash = s.rfind('/');
  if (slash == std::string::npos) return Value::String(".");
  std::string dir = s.substr(0, slash);
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (dir.empty()) return Value::String("/");
  return Value::String(dir);
}

}  // namespace

void RegisterFileFunctions(FunctionTable& t) {
  auto add = [&](const char* name, int n, FunctionImpl f, const char* sig) {
    FunctionSpec s;
    s.min_args = s.max_args = n;
    s.impl = std::move(f);
    s.signature = sig;
    t[name] = std::move(s);
  };
  add("file", 1, FileFn, "path");
  add("fileexists", 1, FileExistsFn, "path");
  add("filebase64", 1, FileBase64Fn, "path");
  add("templatefile", 2, TemplateFileFn, "path, vars");
  add("basename", 1, BaseNameFn, "path");
  add("dirname", 1, DirNameFn, "path");
}

}  // namespace cairn::expr
