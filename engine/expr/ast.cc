#include "engine/expr/ast.h"

#include <algorithm>
#include <optional>

namespace cairn::expr {
namespace {

// Binding strength of a node as an operand: operands that bind more loosely
// than their operator are printed in parentheses (the parser kept any the
// source had as kParens, so this only matters for trees built in code).
int Strength(const Node& n) {
  if (n.kind == NodeKind::kConditional) return 0;
  if (n.kind != NodeKind::kBinary) return 10;
  static const char* levels[][4] = {
      {"||"}, {"&&"}, {"==", "!="}, {"<", "<=", ">", ">="}, {"+", "-"}, {"*", "/", "%"}};
  for (int l = 0; l < 6; ++l) {
    for (const char* op : levels[l]) {
      if (op && n.op == op) return l + 1;
    }
  }
  return 10;
}

void PrintTo(std::string& out, const Node& n);

void PrintOperand(std::string& out, const Node& n, int min) {
  if (Strength(n) < min) {
    out += '(';
    PrintTo(out, n);
    out += ')';
  } else {
    PrintTo(out, n);
  }
}

// Template text inside a quoted string: escapes as HCL reads them.
void PrintQuotedText(std::string& out, const std::string& s) {
  std::string quoted = ToSource(Value::String(s));
  out.append(quoted, 1, quoted.size() - 2);
}

void PrintTemplateParts(std::string& out, const Node& t, bool quoted);

// The text of a template part that is only string literals: a literal, or
// an interpolated string template of literals (`${"a${"b"}"}`), which the
// parser reads back as one literal; nullopt for anything else.
std::optional<std::string> LiteralText(const Node& k) {
  if (k.kind == NodeKind::kLiteral && k.value.is_string() && !k.value.sensitive()) {
    return k.value.as_string();
  }
  if (k.kind != NodeKind::kTemplate) return std::nullopt;
  std::string text;
  for (const NodePtr& kid : k.kids) {
    auto part = LiteralText(*kid);
    if (!part) return std::nullopt;
    text += *part;
  }
  return text;
}

void PrintTemplatePart(std::string& out, const Node& k, bool quoted) {
  if (auto text = LiteralText(k)) {
    if (quoted) {
      PrintQuotedText(out, *text);
    } else {
      for (size_t i = 0; i < text->size(); ++i) {
        char c = (*text)[i];
        out += c;
        if (c == '$' && i + 1 < text->size() && (*text)[i + 1] == '{') out += '$';
      }
    }
  } else if (k.kind == NodeKind::kTemplate && quoted) {
    // An interpolated string template inside a quoted one: its parts, in
    // place (the same text either way).
    PrintTemplateParts(out, k, quoted);
  } else if (k.kind == NodeKind::kTemplateIf) {
    out += "%{ if ";
    PrintTo(out, *k.kids[0]);
    out += " }";
    PrintTemplateParts(out, *k.kids[1], quoted);
    if (k.kids[2]) {
      out += "%{ else }";
      PrintTemplateParts(out, *k.kids[2], quoted);
    }
    out += "%{ endif }";
  } else if (k.kind == NodeKind::kTemplateFor) {
    out += "%{ for ";
    if (!k.key_var.empty()) out += k.key_var + ", ";
    out += k.name + " in ";
    PrintTo(out, *k.kids[0]);
    out += " }";
    PrintTemplateParts(out, *k.kids[1], quoted);
    out += "%{ endfor }";
  } else {
    out += "${";
    PrintTo(out, k);
    out += '}';
  }
}

void PrintTemplateParts(std::string& out, const Node& t, bool quoted) {
  if (t.kind != NodeKind::kTemplate) {
    PrintTemplatePart(out, t, quoted);
    return;
  }
  for (const NodePtr& k : t.kids) PrintTemplatePart(out, *k, quoted);
}

void PrintTraversal(std::string& out, const Node& n) {
  // The part of a splat's traversal after its kSplatItem.
  switch (n.kind) {
    case NodeKind::kSplatItem:
      return;
    case NodeKind::kGetAttr:
      PrintTraversal(out, *n.kids[0]);
      out += '.';
      out += n.name;
      return;
    case NodeKind::kIndex:
      PrintTraversal(out, *n.kids[0]);
      out += '[';
      PrintTo(out, *n.kids[1]);
      out += ']';
      return;
    default:
      return;
  }
}

void PrintTo(std::string& out, const Node& n) {
  switch (n.kind) {
    case NodeKind::kLiteral:
      out += ToSource(n.value);
      return;
    case NodeKind::kTemplate:
    case NodeKind::kTemplateIf:
    case NodeKind::kTemplateFor:
      out += '"';
      PrintTemplateParts(out, n, true);
      out += '"';
      return;
    case NodeKind::kVariable:
      out += n.name;
      return;
    case NodeKind::kGetAttr:
      PrintOperand(out, *n.kids[0], 10);
      out += '.';
      out += n.name;
      return;
    case NodeKind::kIndex:
      PrintOperand(out, *n.kids[0], 10);
      out += '[';
      PrintTo(out, *n.kids[1]);
      out += ']';
      return;
    case NodeKind::kSplat:
      PrintOperand(out, *n.kids[0], 10);
      out += n.expand_last ? ".*" : "[*]";
      if (n.kids[1]) PrintTraversal(out, *n.kids[1]);
      return;
    case NodeKind::kSplatItem:
      return;
    case NodeKind::kCall: {
      out += n.name;
      out += '(';
      for (size_t i = 0; i < n.kids.size(); ++i) {
        if (i) out += ", ";
        PrintTo(out, *n.kids[i]);
      }
      if (n.expand_last) out += "...";
      out += ')';
      return;
    }
    case NodeKind::kUnary:
      out += n.op;
      PrintOperand(out, *n.kids[0], 10);
      return;
    case NodeKind::kBinary: {
      int s = Strength(n);
      PrintOperand(out, *n.kids[0], s);
      out += ' ';
      out += n.op;
      out += ' ';
      PrintOperand(out, *n.kids[1], s + 1);
      return;
    }
    case NodeKind::kConditional:
      PrintOperand(out, *n.kids[0], 1);
      out += " ? ";
      PrintTo(out, *n.kids[1]);
      out += " : ";
      PrintTo(out, *n.kids[2]);
      return;
    case NodeKind::kTuple:
      out += '[';
      for (size_t i = 0; i < n.kids.size(); ++i) {
        if (i) out += ", ";
        PrintTo(out, *n.kids[i]);
      }
      out += ']';
      return;
    case NodeKind::kObject:
      out += '{';
      for (size_t i = 0; i + 1 < n.kids.size(); i += 2) {
        if (i) out += ", ";
        const Node& key = *n.kids[i];
        if (key.kind == NodeKind::kLiteral && key.flag) {
          out += key.value.as_string();
        } else if (key.kind == NodeKind::kVariable || key.kind == NodeKind::kGetAttr ||
                   key.kind == NodeKind::kIndex) {
          // A name would read as the key itself: keep it an expression.
          out += '(';
          PrintTo(out, key);
          out += ')';
        } else {
          PrintTo(out, key);
        }
        out += " = ";
        PrintTo(out, *n.kids[i + 1]);
      }
      out += '}';
      return;
    case NodeKind::kFor:
      out += n.flag ? "{" : "[";
      out += "for ";
      if (!n.key_var.empty()) out += n.key_var + ", ";
      out += n.name + " in ";
      PrintTo(out, *n.kids[0]);
      out += " : ";
      if (n.flag) {
        PrintTo(out, *n.kids[1]);
        out += " => ";
      }
      PrintTo(out, *n.kids[2]);
      if (n.expand_last) out += "...";
      if (n.kids[3]) {
        out += " if ";
        PrintTo(out, *n.kids[3]);
      }
      out += n.flag ? "}" : "]";
      return;
    case NodeKind::kParens:
      out += '(';
      PrintTo(out, *n.kids[0]);
      out += ')';
      return;
  }
}

void CollectTraversals(const Node& n, std::vector<std::string>& bound,
                       std::vector<Traversal>& out) {
  if (n.kind == NodeKind::kGetAttr || n.kind == NodeKind::kIndex || n.kind == NodeKind::kVariable) {
    // Walk down to the root; every key on the way is an expression of its own.
    std::vector<const Node*> chain;
    const Node* cur = &n;
    while (cur->kind == NodeKind::kGetAttr || cur->kind == NodeKind::kIndex) {
      chain.push_back(cur);
      cur = cur->kids[0].get();
    }
    for (const Node* link : chain) {
      if (link->kind == NodeKind::kIndex) CollectTraversals(*link->kids[1], bound, out);
    }
    if (cur->kind != NodeKind::kVariable) {
      CollectTraversals(*cur, bound, out);
      return;
    }
    if (std::find(bound.begin(), bound.end(), cur->name) != bound.end()) return;
    Traversal t;
    t.root = cur;
    t.whole = &n;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      Traversal::Step step;
      step.attr = (*it)->kind == NodeKind::kGetAttr;
      if (step.attr) {
        step.name = (*it)->name;
      } else {
        step.key = (*it)->kids[1].get();
      }
      t.steps.push_back(std::move(step));
    }
    out.push_back(std::move(t));
    return;
  }
  if (n.kind == NodeKind::kFor || n.kind == NodeKind::kTemplateFor) {
    CollectTraversals(*n.kids[0], bound, out);
    bound.push_back(n.name);
    if (!n.key_var.empty()) bound.push_back(n.key_var);
    for (size_t i = 1; i < n.kids.size(); ++i) {
      if (n.kids[i]) CollectTraversals(*n.kids[i], bound, out);
    }
    bound.resize(bound.size() - (n.key_var.empty() ? 1 : 2));
    return;
  }
  if (n.kind == NodeKind::kSplat) {
    CollectTraversals(*n.kids[0], bound, out);
    if (n.kids[1]) CollectTraversals(*n.kids[1], bound, out);  // keys in the element steps
    return;
  }
  for (const NodePtr& k : n.kids) {
    if (k) CollectTraversals(*k, bound, out);
  }
}

}  // namespace

void Traversals(const Node& n, std::vector<Traversal>& out) {
  std::vector<std::string> bound;
  CollectTraversals(n, bound, out);
}

NodePtr MakeLiteral(Value v, uint32_t begin, uint32_t end) {
  auto n = std::make_shared<Node>();
  n->kind = NodeKind::kLiteral;
  n->value = std::move(v);
  n->begin = begin;
  n->end = end;
  return n;
}

NodePtr MakeVariable(std::string name, uint32_t begin, uint32_t end) {
  auto n = std::make_shared<Node>();
  n->kind = NodeKind::kVariable;
  n->name = std::move(name);
  n->begin = begin;
  n->end = end;
  return n;
}

NodePtr MakeGetAttr(NodePtr obj, std::string name, uint32_t end) {
  auto n = std::make_shared<Node>();
  n->kind = NodeKind::kGetAttr;
  n->begin = obj->begin;
  n->end = end ? end : obj->end;
  n->name = std::move(name);
  n->kids = {std::move(obj)};
  return n;
}

NodePtr MakeIndex(NodePtr obj, NodePtr key, uint32_t end) {
  auto n = std::make_shared<Node>();
  n->kind = NodeKind::kIndex;
  n->begin = obj->begin;
  n->end = end ? end : key->end;
  n->kids = {std::move(obj), std::move(key)};
  return n;
}

std::string Print(const Node& n) {
  std::string out;
  PrintTo(out, n);
  return out;
}

std::string PrintTemplate(const Node& n) {
  std::string out;
  if (n.kind == NodeKind::kLiteral && n.value.is_string() && !n.value.sensitive()) {
    PrintTemplatePart(out, n, false);
  } else if (n.kind == NodeKind::kTemplate) {
    PrintTemplateParts(out, n, false);
  } else {
    PrintTemplatePart(out, n, false);
  }
  return out;
}

bool SameTree(const Node& a, const Node& b) {
  if (a.kind != b.kind || a.name != b.name || a.op != b.op || a.key_var != b.key_var ||
      a.flag != b.flag || a.expand_last != b.expand_last || a.kids.size() != b.kids.size()) {
    return false;
  }
  if (a.kind == NodeKind::kLiteral &&
      (Compare(a.value, b.value) != 0 || a.value.sensitive() != b.value.sensitive())) {
    return false;
  }
  for (size_t i = 0; i < a.kids.size(); ++i) {
    if (!a.kids[i] != !b.kids[i]) return false;
    if (a.kids[i] && !SameTree(*a.kids[i], *b.kids[i])) return false;
  }
  return true;
}

}  // namespace cairn::expr
