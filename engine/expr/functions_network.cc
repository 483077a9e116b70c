// Network functions: cidrhost, cidrnetmask, cidrsubnet, cidrsubnets, for
// IPv4 and IPv6 prefixes, with Terraform's arguments, results and errors.
//
// An address is an unsigned 128-bit number and a width (32 or 128 bits).
// As Terraform, IPv4 octets with leading zeros read as decimal ("010" is
// 10), host bits in a prefix are ignored ("10.1.2.3/8" is 10.0.0.0/8), and
// results are written canonically (IPv6 as RFC 5952: lowercase, the longest
// run of zero groups as "::").
#include <cstdio>

#include "engine/expr/functions.h"

namespace cairn::expr {
namespace {

using U128 = unsigned __int128;

struct Prefix {
  U128 addr = 0;  // host bits cleared
  int bits = 32;  // 32 (IPv4) or 128 (IPv6)
  int len = 0;    // prefix length
};

// The mask of a prefix of `len` bits in an address of `bits` bits.
U128 Mask(int len, int bits) {
  if (len == 0) return 0;
  U128 all = bits == 128 ? ~U128(0) : (U128(1) << bits) - 1;
  return all & ~(len >= bits ? U128(0) : ((U128(1) << (bits - len)) - 1));
}

// The largest number of `n` bits (n from 0 to 128).
U128 Ones(int n) { return n >= 128 ? ~U128(0) : (U128(1) << n) - 1; }

std::optional<U128> ParseIPv4(std::string_view s) {
  U128 out = 0;
  int parts = 0;
  size_t i = 0;
  while (true) {
    size_t start = i;
    unsigned v = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9' && i - start < 8) v = v * 10 + (s[i++] - '0');
    if (i == start || v > 255) return std::nullopt;
    out = (out << 8) | v;
    ++parts;
    if (i == s.size()) break;
    if (s[i] != '.' || parts == 4) return std::nullopt;
    ++i;
  }
  if (parts != 4) return std::nullopt;
  return out;
}

std::optional<U128> ParseIPv6(std::string_view s) {
  std::vector<uint16_t> head, tail;
  bool gap = false;
  size_t i = 0;
  if (s.starts_with("::")) {
    gap = true;
    i = 2;
  }
  while (i < s.size()) {
    auto& groups = gap ? tail : head;
    size_t start = i;
    // An IPv4 address may end the text ("::ffff:10.0.0.1").
    size_t dot = s.find('.', i);
    size_t colon = s.find(':', i);
    if (dot != std::string_view::npos && (colon == std::string_view::npos || dot < colon)) {
      auto v4 = ParseIPv4(s.substr(i));
      if (!v4) return std::nullopt;
      groups.push_back(static_cast<uint16_t>(*v4 >> 16));
      groups.push_back(static_cast<uint16_t>(*v4 & 0xFFFF));
      i = s.size();
      break;
    }
    unsigned v = 0;
    while (i < s.size() && std::isxdigit(static_cast<unsigned char>(s[i])) && i - start < 4) {
      char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s[i++])));
      v = v * 16 + static_cast<unsigned>(c <= '9' ? c - '0' : c - 'a' + 10);
    }
    if (i == start) return std::nullopt;
    groups.push_back(static_cast<uint16_t>(v));
    if (i == s.size()) break;
    if (s[i] != ':') return std::nullopt;
    ++i;
    if (i < s.size() && s[i] == ':') {
      if (gap) return std::nullopt;
      gap = true;
      ++i;
    } else if (i == s.size()) {
      return std::nullopt;  // a trailing single ":"
    }
  }
  size_t n = head.size() + tail.size();
  if (gap ? n > 7 : n != 8) return std::nullopt;
  U128 out = 0;
  for (uint16_t g : head) out = (out << 16) | g;
  for (size_t k = 0; k < 8 - n; ++k) out <<= 16;
  for (uint16_t g : tail) out = (out << 16) | g;
  return out;
}

std::optional<Prefix> ParsePrefix(const std::string& text) {
  size_t slash = text.find('/');
  if (slash == std::string::npos) return std::nullopt;
  std::string_view addr = std::string_view(text).substr(0, slash);
  std::string_view len = std::string_view(text).substr(slash + 1);
  Prefix p;
  if (addr.find(':') != std::string_view::npos) {
    auto v = ParseIPv6(addr);
    if (!v) return std::nullopt;
    p.addr = *v;
    p.bits = 128;
  } else {
    auto v = ParseIPv4(addr);
    if (!v) return std::nullopt;
    p.addr = *v;
    p.bits = 32;
  }
  if (len.empty() || len.size() > 3) return std::nullopt;
  int n = 0;
  for (char c : len) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  if (n > p.bits) return std::nullopt;
  p.len = n;
  p.addr &= Mask(n, p.bits);
  return p;
}

std::string FormatAddress(U128 addr, int bits) {
  char buf[64];
  if (bits == 32) {
    unsigned v = static_cast<unsigned>(addr);
    std::snprintf(buf, sizeof buf, "%u.%u.%u.%u", v >> 24, (v >> 16) & 255, (v >> 8) & 255,
                  v & 255);
    return buf;
  }
  unsigned groups[8];
  for (int k = 0; k < 8; ++k) groups[k] = static_cast<unsigned>((addr >> (16 * (7 - k))) & 0xFFFF);
  // The longest run of two or more zero groups (the first of equals).
  int best = -1, best_len = 1;
  for (int k = 0; k < 8;) {
    if (groups[k] != 0) {
      ++k;
      continue;
    }
    int e = k;
    while (e < 8 && groups[e] == 0) ++e;
    if (e - k > best_len) {
      best = k;
      best_len = e - k;
    }
    k = e;
  }
  std::string out;
  for (int k = 0; k < 8; ++k) {
    if (k == best) {
      out += "::";
      k += best_len - 1;
      continue;
    }
    if (!out.empty() && out.back() != ':') out += ':';
    std::snprintf(buf, sizeof buf, "%x", groups[k]);
    out += buf;
  }
  return out;
}

std::string FormatPrefix(U128 addr, int bits, int len) {
  return FormatAddress(addr, bits) + "/" + std::to_string(len);
}

std::optional<Prefix> ArgPrefix(const Value& v, size_t i, CallContext& cx) {
  auto s = ArgString(v, i, cx);
  if (!s) return std::nullopt;
  auto p = ParsePrefix(*s);
  if (!p) {
    cx.ArgError(i, "\"" + *s +
                       "\" is not a CIDR prefix: write an IPv4 or IPv6 address, \"/\" and a "
                       "prefix length (\"10.0.0.0/16\")");
  }
  return p;
}

Value CidrHostFn(const std::vector<Value>& a, CallContext& cx) {
  auto p = ArgPrefix(a[0], 0, cx);
  auto host = ArgInt(a[1], 1, cx);
  if (!p || !host) return Value();
  U128 max = Ones(p->bits - p->len);
  U128 num;
  if (*host >= 0) {
    num = static_cast<U128>(*host);
    if (num > max) {
      cx.ArgError(1, "prefix of " + std::to_string(p->len) +
                         " does not accommodate a host numbered " + std::to_string(*host));
      return Value();
    }
  } else {
    // Negative numbers count back from the last address: -1 is the last.
    U128 back = static_cast<U128>(-(*host + 1));
    if (back > max) {
      cx.ArgError(1, "prefix of " + std::to_string(p->len) +
                         " does not accommodate a host numbered " + std::to_string(*host));
      return Value();
    }
    num = max - back;
  }
  return Value::String(FormatAddress(p->addr | num, p->bits));
}

Value CidrNetmaskFn(const std::vector<Value>& a, CallContext& cx) {
  auto p = ArgPrefix(a[0], 0, cx);
  if (!p) return Value();
  if (p->bits != 32) {
    cx.ArgError(0, "IPv6 addresses cannot have a netmask: " + a[0].as_string());
    return Value();
  }
  return Value::String(FormatAddress(Mask(p->len, 32), 32));
}

Value CidrSubnetFn(const std::vector<Value>& a, CallContext& cx) {
  auto p = ArgPrefix(a[0], 0, cx);
  auto newbits = ArgInt(a[1], 1, cx);
  auto netnum = ArgInt(a[2], 2, cx);
  if (!p || !newbits || !netnum) return Value();
  if (*newbits < 0) {
    cx.ArgError(1, "newbits must not be negative, not " + std::to_string(*newbits));
    return Value();
  }
  if (*newbits > p->bits - p->len) {
    cx.ArgError(1, "insufficient address space to extend prefix of " + std::to_string(p->len) +
                       " by " + std::to_string(*newbits));
    return Value();
  }
  int len = p->len + static_cast<int>(*newbits);
  if (*netnum < 0 || static_cast<U128>(*netnum) > Ones(static_cast<int>(*newbits))) {
    cx.ArgError(2, "prefix extension of " + std::to_string(*newbits) +
                       " does not accommodate a subnet numbered " + std::to_string(*netnum));
    return Value();
  }
  U128 addr = len == 0 ? p->addr : p->addr | (static_cast<U128>(*netnum) << (p->bits - len));
  return Value::String(FormatPrefix(addr, p->bits, len));
}

// cidrsubnets(prefix, newbits...): consecutive subnets, each starting at
// the first address after the one before that is aligned to its own size.
Value CidrSubnetsFn(const std::vector<Value>& a, CallContext& cx) {
  auto p = ArgPrefix(a[0], 0, cx);
  if (!p) return Value();
  // The next free address, as an offset into the prefix; `full` once the
  // prefix is used to its end (the offset would not fit 128 bits).
  U128 offset = 0;
  bool full = false;
  U128 last_offset = Ones(p->bits - p->len);  // the prefix's last address
  std::string previous;
  List out;
  for (size_t i = 1; i < a.size(); ++i) {
    auto newbits = ArgInt(a[i], i, cx);
    if (!newbits) return Value();
    if (*newbits < 1) {
      cx.ArgError(i, "must extend prefix by at least one bit");
      return Value();
    }
    if (*newbits > 32) {
      cx.ArgError(i, "may not extend prefix by more than 32 bits");
      return Value();
    }
    int len = p->len + static_cast<int>(*newbits);
    if (len > p->bits) {
      cx.ArgError(i, "would extend prefix to " + std::to_string(len) +
                         " bits, which is too long for an " + (p->bits == 32 ? "IPv4" : "IPv6") +
                         " address");
      return Value();
    }
    U128 size_minus_1 = Ones(p->bits - len);  // the subnet's size, less one
    U128 start = offset;
    bool fits = !full;
    if (fits && (start & size_minus_1) != 0) {
      start = (start | size_minus_1);
      fits = !__builtin_add_overflow(start, U128(1), &start);
    }
    U128 end = 0;  // the subnet's last address, as an offset
    if (fits) fits = !__builtin_add_overflow(start, size_minus_1, &end) && end <= last_offset;
    if (!fits) {
      cx.ArgError(i, "not enough remaining address space for a subnet with a prefix of " +
                         std::to_string(len) + " bits after " + previous);
      return Value();
    }
    previous = FormatPrefix(p->addr | start, p->bits, len);
    out.push_back(Value::String(previous));
    full = end == last_offset;
    offset = end + 1;
  }
  return Value::MakeList(std::move(out));
}

}  // namespace

void RegisterNetworkFunctions(FunctionTable& t) {
  auto add = [&](const char* name, int min, int max, FunctionImpl f, const char* sig) {
    FunctionSpec s;
    s.min_args = min;
    s.max_args = max;
    s.impl = std::move(f);
    s.signature = sig;
    t[name] = std::move(s);
  };
  add("cidrhost", 2, 2, CidrHostFn, "prefix, hostnum");
  add("cidrnetmask", 1, 1, CidrNetmaskFn, "prefix");
  add("cidrsubnet", 3, 3, CidrSubnetFn, "prefix, newbits, netnum");
  add("cidrsubnets", 1, -1, CidrSubnetsFn, "prefix, newbits...");
}

}  // namespace cairn::expr
