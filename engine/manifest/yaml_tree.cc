#include "engine/manifest/yaml_tree.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <map>
#include <sstream>

namespace cairn {

namespace {

const std::string& EmptyString() {
  static const std::string kEmpty;
  return kEmpty;
}

template <typename T>
const T& EmptyOf() {
  static const T kEmpty{};
  return kEmpty;
}

YamlMark ToMark(const YAML::Mark& m) {
  if (m.is_null()) return {};
  return {m.line, m.column};
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

constexpr char kBadByteStandIn = '\xFF';

// Records the runs of bad bytes of `text` in `tree`; when there are any,
// returns the text with each replaced by kBadByteStandIn (same positions).
std::optional<std::string> FindBadBytes(const std::string& text, YamlTree& tree) {
  if (std::all_of(text.begin(), text.end(),
                  [](char c) { return c != '\0' && static_cast<unsigned char>(c) < 0x80; })) {
    return std::nullopt;
  }
  std::optional<std::string> clean;
  // Positions as yaml-cpp counts them: a line ends at LF, or at a CR not
  // followed by LF; columns are bytes, a UTF-8 byte order mark not counted.
  int line = 0;
  size_t line_start = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
  size_t run_end = std::string::npos;  // where the current run of bad bytes ends
  auto run_kind = YamlBadBytes::Kind::kNul;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    size_t len = c == '\0' ? 0 : Utf8SequenceLength(text, i);
    if (len > 0) {
      if (c == '\n' || (c == '\r' && (i + 1 == text.size() || text[i + 1] != '\n'))) {
        ++line;
        line_start = i + 1;
      }
      i += len;
      continue;
    }
    const auto kind = c == '\0' ? YamlBadBytes::Kind::kNul : YamlBadBytes::Kind::kNotUtf8;
    if (!clean) clean = text;
    (*clean)[i] = kBadByteStandIn;
    if (run_end == i && run_kind == kind) {
      if (tree.bad_byte_runs <= YamlTree::kMaxBadByteRuns) ++tree.bad_bytes.back().length;
    } else {
      ++tree.bad_byte_runs;
      if (tree.bad_bytes.size() < YamlTree::kMaxBadByteRuns) {
        tree.bad_bytes.push_back(
            {kind, {line, static_cast<int>(i - std::min(i, line_start))}, i, 1});
      }
    }
    run_end = i + 1;
    run_kind = kind;
    ++i;
  }
  return clean;
}

// A scalar read from text with bad bytes: each stand-in as U+FFFD.
void ReplaceStandIns(std::string& scalar) {
  if (scalar.find(kBadByteStandIn) == std::string::npos) return;
  std::string out;
  for (char c : scalar) {
    if (c == kBadByteStandIn) {
      out += "\xEF\xBF\xBD";
    } else {
      out += c;
    }
  }
  scalar = std::move(out);
}

}  // namespace

YamlNode::Type YamlNode::type() const { return d_ ? d_->type : Type::kUndefined; }
const std::string& YamlNode::Scalar() const { return d_ ? d_->scalar : EmptyString(); }
bool YamlNode::quoted() const { return d_ && d_->quoted; }
bool YamlNode::aliased() const { return d_ && d_->aliased; }
YamlMark YamlNode::Mark() const { return d_ ? d_->mark : YamlMark{}; }
YamlMark YamlNode::EndMark() const { return d_ ? d_->end : YamlMark{}; }

size_t YamlNode::size() const {
  if (!d_) return 0;
  return d_->type == Type::kMap ? d_->pairs.size() : d_->items.size();
}

YamlNode YamlNode::operator[](size_t i) const {
  if (!d_) return {};
  if (d_->type == Type::kSequence && i < d_->items.size()) return d_->items[i];
  if (d_->type == Type::kMap && i < d_->pairs.size()) return d_->pairs[i].second;
  return {};
}

const std::vector<YamlNode>& YamlNode::items() const {
  return d_ ? d_->items : EmptyOf<std::vector<YamlNode>>();
}

const std::vector<std::pair<YamlNode, YamlNode>>& YamlNode::pairs() const {
  return d_ ? d_->pairs : EmptyOf<std::vector<std::pair<YamlNode, YamlNode>>>();
}

YamlNode YamlNode::Get(std::string_view key) const {
  if (!d_ || d_->type != Type::kMap) return {};
  for (const auto& [k, v] : d_->pairs) {
    if (k.IsScalar() && k.Scalar() == key) return v;
  }
  return {};
}

// Thrown by the builder when the parser emits more nodes than the text can
// hold: yaml-cpp 0.7 loops forever on some malformed input.
struct RunawayParser {
  YamlMark mark;
};

class YamlTreeBuilder : public YAML::EventHandler {
 public:
  // `unended` outlives the builder of one document: the last nodes of a
  // document end where the next document begins.
  YamlTreeBuilder(YamlTree& tree, size_t max_nodes, std::vector<YamlNodeData*>& unended)
      : tree_(tree), unended_(unended), max_nodes_(max_nodes) {}

  void OnDocumentStart(const YAML::Mark& mark) override { Reached(mark); }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    YamlNodeData* d = New(YamlNode::Type::kNull, mark, anchor);
    unended_.push_back(d);
    Add(YamlNode(d));
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    Reached(mark);
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) {
      Add(YamlNode(New(YamlNode::Type::kNull, mark, 0)));
    } else {
      it->second->aliased = true;
      Add(YamlNode(it->second));
    }
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    YamlNodeData* d = New(YamlNode::Type::kScalar, mark, anchor);
    d->scalar = value;
    d->quoted = tag == "!" || tag == "tag:yaml.org,2002:str" || tag == "!!str";
    unended_.push_back(d);
    Add(YamlNode(d));
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    stack_.push_back({New(YamlNode::Type::kSequence, mark, anchor), {}, false});
  }
  void OnSequenceEnd() override { Close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    stack_.push_back({New(YamlNode::Type::kMap, mark, anchor), {}, false});
  }
  void OnMapEnd() override { Close(); }

 private:
  struct Frame {
    YamlNodeData* data;
    YamlNode key;
    bool has_key;
  };

  // The text reached `mark`: every node complete before it ends there.
  void Reached(const YAML::Mark& mark) {
    for (YamlNodeData* d : unended_) d->end = ToMark(mark);
    unended_.clear();
  }

  YamlNodeData* New(YamlNode::Type type, const YAML::Mark& mark, YAML::anchor_t anchor) {
    Reached(mark);
    if (tree_.arena_.size() >= max_nodes_) throw RunawayParser{ToMark(mark)};
    YamlNodeData& d = tree_.arena_.emplace_back();
    d.type = type;
    d.mark = ToMark(mark);
    if (anchor != 0) anchors_[anchor] = &d;
    return &d;
  }

  void Add(YamlNode node) {
    if (stack_.empty()) {
      tree_.documents.push_back(node);
      return;
    }
    Frame& top = stack_.back();
    if (top.data->type == YamlNode::Type::kSequence) {
      top.data->items.push_back(node);
    } else if (!top.has_key) {
      top.key = node;
      top.has_key = true;
    } else {
      top.data->pairs.emplace_back(top.key, node);
      top.has_key = false;
    }
  }

  void Close() {
    if (stack_.empty()) return;
    YamlNodeData* d = stack_.back().data;
    stack_.pop_back();
    unended_.push_back(d);
    Add(YamlNode(d));
  }

  YamlTree& tree_;
  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, YamlNodeData*> anchors_;
  std::vector<YamlNodeData*>& unended_;  // complete nodes waiting for the next mark
  size_t max_nodes_;
};

std::vector<YamlNode> YamlTree::Scalars() const {
  std::vector<YamlNode> out;
  for (const YamlNodeData& d : arena_) {
    if (d.type == YamlNode::Type::kScalar) out.emplace_back(&d);
  }
  return out;
}

std::unique_ptr<YamlTree> YamlTree::Parse(const std::string& original) {
  auto tree = std::make_unique<YamlTree>();
  std::optional<std::string> clean = FindBadBytes(original, *tree);
  const std::string& text = clean ? *clean : original;
  std::istringstream in(text);
  // Every node takes at least one character of text (an alias two), so a
  // parser emitting more than this is looping.
  const size_t max_nodes = 2 * text.size() + 16;
  std::vector<YamlNodeData*> unended;
  try {
    YAML::Parser parser(in);
    while (true) {
      // A document is only kept once its root is complete: a syntax error
      // drops the partial one.
      YamlTreeBuilder builder(*tree, max_nodes, unended);
      if (!parser.HandleNextDocument(builder)) break;
    }
  } catch (const RunawayParser& r) {
    tree->error = YamlSyntaxError{"the YAML parser could not make sense of the text here", r.mark};
  } catch (const YAML::Exception& e) {
    tree->error = YamlSyntaxError{e.msg, ToMark(e.mark)};
  } catch (const std::exception& e) {
    tree->error = YamlSyntaxError{e.what(), {}};
  }
  if (clean) {
    for (YamlNodeData& d : tree->arena_) ReplaceStandIns(d.scalar);
  }
  return tree;
}

}  // namespace cairn
