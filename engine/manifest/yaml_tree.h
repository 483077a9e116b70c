// YamlTree: YAML text parsed (by libyaml's event parser) into a light,
// immutable tree that keeps the source position of every node. The loader
// needs positions for every diagnostic and reads thousands of documents:
// plain nodes in one arena per file, from the fastest YAML parser Debian
// has (yaml-cpp's scanner took 60% of loading a stack; libyaml parses the
// same text six times faster).
//
// Invariants: nodes live as long as the YamlTree that built them and never
// change. Aliases point at the anchored node, so a tree may share nodes, and
// an alias to an enclosing node makes a cycle: walkers bound their depth.
// Scalars are valid UTF-8 without control characters: the characters of the
// text that YAML cannot hold are listed in bad_bytes and read as U+FFFD.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cairn {

struct YamlMark {
  int line = -1;    // 0-based (lines end at LF or a lone CR); -1 when unknown
  int column = -1;  // 0-based, in bytes (a byte order mark not counted)
  bool is_null() const { return line < 0; }
};

struct YamlNodeData;

// A handle to a node; default-constructed handles are "undefined".
class YamlNode {
 public:
  enum class Type : uint8_t { kUndefined, kNull, kScalar, kSequence, kMap };

  YamlNode() = default;
  explicit YamlNode(const YamlNodeData* data) : d_(data) {}

  Type type() const;
  bool IsDefined() const { return d_ != nullptr; }
  bool IsNull() const { return type() == Type::kNull; }
  bool IsScalar() const { return type() == Type::kScalar; }
  bool IsSequence() const { return type() == Type::kSequence; }
  bool IsMap() const { return type() == Type::kMap; }
  // Scalar text ("" for other nodes).
  const std::string& Scalar() const;
  // True for quoted and block scalars and explicit !!str: always strings.
  bool quoted() const;
  // True when an alias refers to this node, which it then stands for.
  bool aliased() const;
  YamlMark Mark() const;
  // Where the text after the node begins: the position of the next node of
  // the file (null when none follows). The node's own text, with any
  // comments after it, lies between Mark() and EndMark().
  YamlMark EndMark() const;
  // Sequence items, or map values in order.
  size_t size() const;
  YamlNode operator[](size_t i) const;
  std::span<const YamlNode> items() const;
  std::span<const std::pair<YamlNode, YamlNode>> pairs() const;
  // The value of key `key` in a map, or an undefined node.
  YamlNode Get(std::string_view key) const;

  bool operator==(const YamlNode& o) const { return d_ == o.d_; }
  // The same for handles to the same node (aliases share nodes).
  const void* id() const { return d_; }

 private:
  const YamlNodeData* d_ = nullptr;
};

// A node as the tree stores it: 64 bytes, its children in the tree's
// storage rather than in vectors of its own (a stack's tree is about 20
// nodes per resource: the largest part of what loading 100,000 held).
struct YamlNodeData {
  YamlNode::Type type = YamlNode::Type::kNull;
  bool quoted = false;
  bool aliased = false;  // an alias refers to it
  uint32_t size = 0;     // kSequence: items; kMap: pairs
  YamlMark mark;
  YamlMark end;
  std::string scalar;
  union {
    const YamlNode* items = nullptr;             // kSequence
    const std::pair<YamlNode, YamlNode>* pairs;  // kMap
  };
};

// Storage that never moves what it holds, so that pointers into it stay
// valid as it grows: blocks of kBlock elements (more for one larger
// request), each filled before the next is made.
template <typename T>
class StableArena {
 public:
  // `n` default elements, contiguous.
  T* Allocate(size_t n) {
    if (blocks_.empty() || blocks_.back().used + n > blocks_.back().capacity) {
      const size_t capacity = n > kBlock ? n : kBlock;
      blocks_.push_back({std::make_unique<T[]>(capacity), capacity, 0});
    }
    Block& b = blocks_.back();
    T* out = b.data.get() + b.used;
    b.used += n;
    return out;
  }
  // Calls f(element) for every element handed out, in order.
  template <typename F>
  void ForEach(F&& f) const {
    for (const Block& b : blocks_) {
      for (size_t i = 0; i < b.used; ++i) f(b.data[i]);
    }
  }

 private:
  static constexpr size_t kBlock = 1024;
  struct Block {
    std::unique_ptr<T[]> data;
    size_t capacity = 0;
    size_t used = 0;
  };
  std::vector<Block> blocks_;
};

// A run of characters of the text that YAML cannot hold: NUL bytes, bytes
// that are not part of well-formed UTF-8 (RFC 3629: no overlong forms, no
// surrogates), or other control characters (YAML 1.2's c-printable: C0 but
// tab, line feed and carriage return; DEL; C1 but NEL; U+FFFE, U+FFFF).
struct YamlBadBytes {
  enum class Kind { kNul, kNotUtf8, kControl } kind = Kind::kNotUtf8;
  YamlMark mark;            // of the first byte
  size_t offset = 0;        // of the first byte in the text
  size_t length = 1;        // bytes in the run, all of `kind`
  uint32_t code_point = 0;  // of a control character: the run's first
};

struct YamlSyntaxError {
  std::string message;  // libyaml's message
  YamlMark mark;
};

class YamlTree {
 public:
  // Parses every document of `text`. On a syntax error, `documents` holds
  // those before it and `error` is set. Never throws.
  static std::unique_ptr<YamlTree> Parse(const std::string& text);

  // Collections nested deeper than this are a syntax error, found as soon
  // as the parser reaches them: libyaml's scanner checks every open flow
  // collection at every token, so unbounded nesting would take time
  // quadratic in the text (300,000 "[" took minutes). Documents may nest
  // kMaxYamlDepth levels (yaml_value.h); deeper ones up to this are
  // reported there, in their own words.
  static constexpr size_t kMaxDepth = 256;

  std::vector<YamlNode> documents;
  std::optional<YamlSyntaxError> error;
  // The first kMaxBadByteRuns runs of bad characters, in text order, and how
  // many runs there are in all. The text is parsed with each bad character
  // replaced by U+FFFD; positions stay those of the original text.
  static constexpr size_t kMaxBadByteRuns = 10;
  std::vector<YamlBadBytes> bad_bytes;
  size_t bad_byte_runs = 0;

  // Every scalar of the text, in order, including those only an alias or a
  // document dropped by a syntax error refers to.
  std::vector<YamlNode> Scalars() const;

 private:
  StableArena<YamlNodeData> nodes_;
  StableArena<YamlNode> items_;                       // of sequences
  StableArena<std::pair<YamlNode, YamlNode>> pairs_;  // of maps
};

}  // namespace cairn
