#include "engine/manifest/yaml_tree.h"

#include <yaml.h>

#include <algorithm>
#include <map>
#include <optional>

namespace cairn {

namespace {

const std::string& EmptyString() {
  static const std::string kEmpty;
  return kEmpty;
}

// The length of the well-formed UTF-8 sequence (RFC 3629, table 3-7 of the
// Unicode standard) at text[i], or 0 when there is none.
size_t Utf8SequenceLength(const std::string& text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + len > text.size() || byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  return len;
}

// Each bad character is parsed as U+FFFD, which libyaml accepts anywhere
// and counts as one character, as the positions below count it.
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Whether every byte is printable ASCII, a tab, a line feed or a carriage
// return: text the parser reads as it is, a column per byte.
bool PlainAscii(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 0x20 && c < 0x7F) || c == '\n' || c == '\t' || c == '\r';
  });
}

// One character of the text as the parser is given it: its bytes, or, for
// a bad one (a NUL, a byte not part of UTF-8, a control character YAML
// cannot hold), U+FFFD in its place.
struct TextChar {
  size_t length = 1;  // bytes in the original text
  bool bad = false;
  YamlBadBytes::Kind kind = YamlBadBytes::Kind::kNotUtf8;
  uint32_t code_point = 0;
};

uint32_t DecodeUtf8(const std::string& text, size_t i, size_t len) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  if (len == 1) return byte(0);
  uint32_t cp = byte(0) & (0xFF >> (len + 1));
  for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (byte(k) & 0x3F);
  return cp;
}

// YAML 1.2's c-printable, as libyaml checks it: tab, line feed, carriage
// return, printable ASCII, NEL, and the rest of Unicode but C1, surrogates
// (never well-formed UTF-8) and U+FFFE/U+FFFF.
bool InYamlCharset(uint32_t cp) {
  return cp == 0x09 || cp == 0x0A || cp == 0x0D || (cp >= 0x20 && cp <= 0x7E) || cp == 0x85 ||
         (cp >= 0xA0 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) || cp >= 0x10000;
}

TextChar ReadChar(const std::string& text, size_t i) {
  TextChar c;
  if (text[i] == '\0') {
    c.bad = true;
    c.kind = YamlBadBytes::Kind::kNul;
    return c;
  }
  size_t len = Utf8SequenceLength(text, i);
  if (len == 0) {
    c.bad = true;
    return c;
  }
  c.length = len;
  c.code_point = DecodeUtf8(text, i, len);
  if (!InYamlCharset(c.code_point)) {
    c.bad = true;
    c.kind = YamlBadBytes::Kind::kControl;
  }
  return c;
}

// Positions as Cairn reports them (and yaml-cpp did): a line ends at LF, or
// at a CR not followed by LF; columns are bytes, a UTF-8 byte order mark not
// counted. libyaml counts columns and offsets in characters, and also ends
// lines at NEL, LS and PS; a text that is not plain ASCII has its marks
// moved to bytes by walking it from the last mark asked for (marks come in
// text order, so each text is walked about once).
class MarkMapper {
 public:
  explicit MarkMapper(const std::string& original) : text_(original), ascii_(PlainAscii(original)) {
    Reset();
  }

  YamlMark FromLibyaml(const yaml_mark_t& m) {
    if (ascii_) return {static_cast<int>(m.line), static_cast<int>(m.column)};
    return AtChar(m.index);
  }

  // The mark of character `index` (counted from after any byte order mark).
  YamlMark AtChar(size_t index) {
    if (index < chars_) Reset();
    while (chars_ < index && byte_ < text_.size()) Step();
    return Here();
  }

  // The mark of byte `offset` of the parsed text, where each bad character
  // of the original took the three bytes of U+FFFD.
  YamlMark AtParsedByte(size_t offset) {
    Reset();
    size_t parsed = byte_;
    while (parsed < offset && byte_ < text_.size()) parsed += Step();
    return Here();
  }

 private:
  // Moves past one character; returns the bytes the parser saw for it.
  size_t Step() {
    const char c = text_[byte_];
    TextChar tc = ReadChar(text_, byte_);
    byte_ += tc.length;
    ++chars_;
    if (c == '\n' || (c == '\r' && (byte_ == text_.size() || text_[byte_] != '\n'))) {
      ++line_;
      line_start_ = byte_;
    }
    return tc.bad ? kReplacement.size() : tc.length;
  }

  YamlMark Here() const { return {line_, static_cast<int>(byte_ - line_start_)}; }

  void Reset() {
    byte_ = line_start_ = text_.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
    chars_ = 0;
    line_ = 0;
  }

  const std::string& text_;
  const bool ascii_;
  size_t byte_ = 0;
  size_t chars_ = 0;
  int line_ = 0;
  size_t line_start_ = 0;
};

// Records the runs of bad characters of `text` in `tree`; when there are
// any, returns the text with each replaced by U+FFFD.
std::optional<std::string> FindBadBytes(const std::string& text, YamlTree& tree) {
  if (PlainAscii(text)) return std::nullopt;
  std::optional<std::string> clean;
  MarkMapper marks(text);
  size_t chars = 0;                    // characters before i
  size_t copied = 0;                   // text[0, copied) is in *clean
  size_t run_end = std::string::npos;  // where the current run of bad characters ends
  auto run_kind = YamlBadBytes::Kind::kNul;
  const size_t bom = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
  for (size_t i = bom; i < text.size(); ++chars) {
    TextChar c = ReadChar(text, i);
    if (!c.bad) {
      i += c.length;
      continue;
    }
    if (!clean) {
      clean.emplace();
      clean->reserve(text.size() + 16);
    }
    clean->append(text, copied, i - copied);
    clean->append(kReplacement);
    copied = i + c.length;
    if (run_end == i && run_kind == c.kind) {
      if (tree.bad_byte_runs <= YamlTree::kMaxBadByteRuns) tree.bad_bytes.back().length += c.length;
    } else {
      ++tree.bad_byte_runs;
      if (tree.bad_bytes.size() < YamlTree::kMaxBadByteRuns) {
        tree.bad_bytes.push_back({c.kind, marks.AtChar(chars), i, c.length, c.code_point});
      }
    }
    run_end = i + c.length;
    run_kind = c.kind;
    i += c.length;
  }
  if (clean) clean->append(text, copied, std::string::npos);
  return clean;
}

}  // namespace

YamlNode::Type YamlNode::type() const { return d_ ? d_->type : Type::kUndefined; }
const std::string& YamlNode::Scalar() const { return d_ ? d_->scalar : EmptyString(); }
bool YamlNode::quoted() const { return d_ && d_->quoted; }
bool YamlNode::aliased() const { return d_ && d_->aliased; }
YamlMark YamlNode::Mark() const { return d_ ? d_->mark : YamlMark{}; }
YamlMark YamlNode::EndMark() const { return d_ ? d_->end : YamlMark{}; }

size_t YamlNode::size() const {
  return d_ && (d_->type == Type::kMap || d_->type == Type::kSequence) ? d_->size : 0;
}

YamlNode YamlNode::operator[](size_t i) const {
  if (!d_ || i >= d_->size) return {};
  if (d_->type == Type::kSequence) return d_->items[i];
  if (d_->type == Type::kMap) return d_->pairs[i].second;
  return {};
}

std::span<const YamlNode> YamlNode::items() const {
  if (!d_ || d_->type != Type::kSequence) return {};
  return {d_->items, d_->size};
}

std::span<const std::pair<YamlNode, YamlNode>> YamlNode::pairs() const {
  if (!d_ || d_->type != Type::kMap) return {};
  return {d_->pairs, d_->size};
}

YamlNode YamlNode::Get(std::string_view key) const {
  if (!d_ || d_->type != Type::kMap) return {};
  for (const auto& [k, v] : pairs()) {
    if (k.IsScalar() && k.Scalar() == key) return v;
  }
  return {};
}

namespace {

// Builds a YamlTree from libyaml's events. Invariant: `stack_` holds the
// open collections, innermost last, and `kids_` the complete children of
// each, in order (a map's as key, value, key, value...); a node is added to
// its parent (or made a document's root) once complete, and a collection's
// children move into the tree's storage when it closes.
class YamlTreeBuilder {
 public:
  YamlTreeBuilder(YamlTree& tree, StableArena<YamlNodeData>& nodes, StableArena<YamlNode>& items,
                  StableArena<std::pair<YamlNode, YamlNode>>& pairs, MarkMapper& marks)
      : tree_(tree), nodes_(nodes), items_(items), pairs_(pairs), marks_(marks) {}

  // Takes one event; false (with `error` set) when the text cannot be a
  // tree. An incomplete document is never one of the tree's documents.
  bool On(const yaml_event_t& e, std::optional<YamlSyntaxError>& error) {
    switch (e.type) {
      case YAML_DOCUMENT_START_EVENT:
        Reached(Mark(e.start_mark));
        anchors_.clear();  // anchors are per document
        return true;
      case YAML_ALIAS_EVENT: {
        YamlMark mark = Mark(e.start_mark);
        Reached(mark);
        auto it = anchors_.find(reinterpret_cast<const char*>(e.data.alias.anchor));
        if (it == anchors_.end()) {
          error = YamlSyntaxError{"found an alias to an anchor not defined before it", mark};
          return false;
        }
        it->second->aliased = true;
        Add(YamlNode(it->second));
        return true;
      }
      case YAML_SCALAR_EVENT: {
        const auto& sc = e.data.scalar;
        std::string_view value(reinterpret_cast<const char*>(sc.value), sc.length);
        std::string_view tag = sc.tag ? reinterpret_cast<const char*>(sc.tag) : "";
        const bool plain = sc.style == YAML_PLAIN_SCALAR_STYLE;
        // A plain untagged null, ~ or nothing is YAML's null (the core
        // schema), whatever the parser; anything quoted, a block scalar or
        // a !!str is a string.
        const bool null = plain && tag.empty() &&
                          (value.empty() || value == "~" || value == "null" || value == "Null" ||
                           value == "NULL");
        YamlNodeData* d =
            New(null ? YamlNode::Type::kNull : YamlNode::Type::kScalar, e.start_mark, sc.anchor);
        if (!null) {
          d->scalar.assign(value);
          d->quoted = !plain || tag == "!" || tag == "tag:yaml.org,2002:str";
        }
        unended_.push_back(d);
        Add(YamlNode(d));
        return true;
      }
      case YAML_SEQUENCE_START_EVENT:
      case YAML_MAPPING_START_EVENT: {
        const bool seq = e.type == YAML_SEQUENCE_START_EVENT;
        if (stack_.size() >= YamlTree::kMaxDepth) {
          error = YamlSyntaxError{"collections nest deeper than " +
                                      std::to_string(YamlTree::kMaxDepth) + " levels here",
                                  Mark(e.start_mark)};
          return false;
        }
        YamlNodeData* d = New(seq ? YamlNode::Type::kSequence : YamlNode::Type::kMap, e.start_mark,
                              seq ? e.data.sequence_start.anchor : e.data.mapping_start.anchor);
        stack_.push_back({d, kids_.size()});
        return true;
      }
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT:
        Close();
        return true;
      default:
        return true;
    }
  }

 private:
  struct Frame {
    YamlNodeData* data;
    size_t first_kid;  // in kids_
  };

  YamlMark Mark(const yaml_mark_t& m) { return marks_.FromLibyaml(m); }

  // The text reached `mark`: every node complete before it ends there.
  void Reached(YamlMark mark) {
    for (YamlNodeData* d : unended_) d->end = mark;
    unended_.clear();
  }

  YamlNodeData* New(YamlNode::Type type, const yaml_mark_t& at, const yaml_char_t* anchor) {
    YamlMark mark = Mark(at);
    Reached(mark);
    YamlNodeData& d = *nodes_.Allocate(1);
    d.type = type;
    d.mark = mark;
    if (anchor) anchors_[reinterpret_cast<const char*>(anchor)] = &d;
    return &d;
  }

  void Add(YamlNode node) {
    if (stack_.empty()) {
      tree_.documents.push_back(node);
      return;
    }
    kids_.push_back(node);
  }

  void Close() {
    if (stack_.empty()) return;
    const Frame top = stack_.back();
    stack_.pop_back();
    YamlNodeData* d = top.data;
    const size_t n = kids_.size() - top.first_kid;
    const YamlNode* kid = kids_.data() + top.first_kid;
    if (d->type == YamlNode::Type::kSequence) {
      YamlNode* items = items_.Allocate(n);
      std::copy(kid, kid + n, items);
      d->items = items;
      d->size = static_cast<uint32_t>(n);
    } else {
      // libyaml ends a mapping only after a key's value (an empty one is a
      // null scalar), so the count is even.
      std::pair<YamlNode, YamlNode>* pairs = pairs_.Allocate(n / 2);
      for (size_t i = 0; i + 1 < n; i += 2) pairs[i / 2] = {kid[i], kid[i + 1]};
      d->pairs = pairs;
      d->size = static_cast<uint32_t>(n / 2);
    }
    kids_.resize(top.first_kid);
    unended_.push_back(d);
    Add(YamlNode(d));
  }

  YamlTree& tree_;
  StableArena<YamlNodeData>& nodes_;
  StableArena<YamlNode>& items_;
  StableArena<std::pair<YamlNode, YamlNode>>& pairs_;
  MarkMapper& marks_;
  std::vector<Frame> stack_;
  std::vector<YamlNode> kids_;  // of the open collections, see above
  std::map<std::string, YamlNodeData*, std::less<>> anchors_;
  std::vector<YamlNodeData*> unended_;  // complete nodes waiting for the next mark
};

// libyaml's problem, with its context when it has one ("did not find
// expected key, while parsing a block mapping that began at 3:1").
YamlSyntaxError ParserError(const yaml_parser_t& p, MarkMapper& marks) {
  YamlSyntaxError e;
  e.message = p.problem ? p.problem : "the YAML parser could not make sense of the text here";
  if (p.error == YAML_READER_ERROR) {
    e.mark = marks.AtParsedByte(p.problem_offset);
    return e;
  }
  e.mark = marks.FromLibyaml(p.problem_mark);
  if (p.context) {
    YamlMark at = marks.FromLibyaml(p.context_mark);
    e.message += std::string(", ") + p.context;
    if (at.line != e.mark.line || at.column != e.mark.column) {
      e.message +=
          " that began at " + std::to_string(at.line + 1) + ":" + std::to_string(at.column + 1);
    }
  }
  return e;
}

}  // namespace

std::vector<YamlNode> YamlTree::Scalars() const {
  std::vector<YamlNode> out;
  nodes_.ForEach([&](const YamlNodeData& d) {
    if (d.type == YamlNode::Type::kScalar) out.emplace_back(&d);
  });
  return out;
}

std::unique_ptr<YamlTree> YamlTree::Parse(const std::string& original) {
  auto tree = std::make_unique<YamlTree>();
  std::optional<std::string> clean = FindBadBytes(original, *tree);
  const std::string& text = clean ? *clean : original;
  MarkMapper marks(original);
  YamlTreeBuilder builder(*tree, tree->nodes_, tree->items_, tree->pairs_, marks);
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) {
    tree->error = YamlSyntaxError{"out of memory", {}};
    return tree;
  }
  yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()),
                               text.size());
  for (;;) {
    yaml_event_t event;
    if (!yaml_parser_parse(&parser, &event)) {
      tree->error = ParserError(parser, marks);
      break;
    }
    const bool end = event.type == YAML_STREAM_END_EVENT;
    const bool ok = builder.On(event, tree->error);
    yaml_event_delete(&event);
    if (end || !ok) break;
  }
  yaml_parser_delete(&parser);
  return tree;
}

}  // namespace cairn
