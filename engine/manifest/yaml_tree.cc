#include "engine/manifest/yaml_tree.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

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

}  // namespace

YamlNode::Type YamlNode::type() const { return d_ ? d_->type : Type::kUndefined; }
const std::string& YamlNode::Scalar() const { return d_ ? d_->scalar : EmptyString(); }
bool YamlNode::quoted() const { return d_ && d_->quoted; }
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
  std::map<YAML::anchor_t, const YamlNodeData*> anchors_;
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

std::unique_ptr<YamlTree> YamlTree::Parse(const std::string& text) {
  auto tree = std::make_unique<YamlTree>();
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
  return tree;
}

}  // namespace cairn
