#include "engine/manifest/settings.h"

#include <algorithm>
#include <filesystem>

#include "base/duration.h"
#include "base/redact.h"
#include "base/schema/suggest.h"
#include "engine/manifest/evaluate.h"
#include "engine/manifest/locate.h"
#include "engine/manifest/yaml_value.h"

namespace cairn {
namespace {

const std::vector<std::string> kTimeoutKeys = {"create",  "update",    "delete", "request",
                                               "connect", "operation", "read"};

void ScanTokenLiterals(const ManifestDocument& doc, const YamlNode& node,
                       std::vector<Diagnostic>& diags) {
  if (node.IsScalar()) {
    if (LooksLikeApiToken(node.Scalar())) {
      AddError(
          diags, "token_literal", "provider document holds a literal that looks like an API token",
          NodeLoc(doc.file, node),
          "tokens are read from the environment only: set token_env to the name of the variable "
          "holding it (default CAIRN_TOKEN)");
    }
  } else if (node.IsSequence()) {
    for (const auto& c : node.items()) ScanTokenLiterals(doc, c, diags);
  } else if (node.IsMap()) {
    for (auto it = node.pairs().begin(); it != node.pairs().end(); ++it) {
      if (it->first.IsScalar() && it->first.Scalar() == "token") continue;
      ScanTokenLiterals(doc, it->second, diags);
    }
  }
}

// One key source of a backend's `encryption` (`what`: "encryption" or
// "encryption.fallback"): {key_env: NAME} or {key_file: PATH}.
std::optional<StateKeySource> LoadKeySource(const ManifestDocument& doc, const Value& v,
                                            const YamlNode& node, const std::string& what,
                                            std::vector<Diagnostic>& diags) {
  const bool has_env = v.contains("key_env"), has_file = v.contains("key_file");
  if (has_env == has_file) {
    AddError(diags, "invalid_value", what + " needs exactly one of key_env and key_file",
             NodeLoc(doc.file, node), "e.g. " + what + ": {key_env: CAIRN_STATE_KEY}");
    return std::nullopt;
  }
  StateKeySource src;
  if (has_env) {
    const Value& e = v["key_env"];
    if (!e.is_string() || !IsEnvName(e.get<std::string>())) {
      AddError(diags, "invalid_value",
               what + ".key_env must name an environment variable, such as CAIRN_STATE_KEY",
               NodeLoc(doc.file, ChildNode(node, "key_env")));
      return std::nullopt;
    }
    src.env = e.get<std::string>();
  } else {
    const Value& f = v["key_file"];
    if (!f.is_string() || f.get<std::string>().empty()) {
      AddError(diags, "invalid_value",
               what +
                   ".key_file must be a file's path (relative to the stack directory, or "
                   "absolute)",
               NodeLoc(doc.file, ChildNode(node, "key_file")));
      return std::nullopt;
    }
    src.file = f.get<std::string>();
  }
  for (const auto& [k, unused] : v.items()) {
    if (k != "key_env" && k != "key_file" && k != "fallback" && k != "unencrypted") {
      AddError(diags, "unknown_field", "unknown field \"" + k + "\" in " + what,
               KeyLoc(doc.file, node, k), "expected key_env, key_file or fallback");
    }
  }
  return src;
}

// The backend's `encryption` (engine/state/state_cipher.h).
void LoadEncryption(const ManifestDocument& doc, BackendConfig& b, std::vector<Diagnostic>& diags) {
  const Value& v = doc.value["encryption"];
  const YamlNode node = ChildNode(doc.node, "encryption");
  if (!v.is_object()) {
    AddError(diags, "wrong_type", "encryption must be a map such as {key_env: CAIRN_STATE_KEY}",
             NodeLoc(doc.file, node));
    return;
  }
  const bool unencrypted = v.contains("unencrypted") && v["unencrypted"] == true;
  if (v.contains("unencrypted") && !v["unencrypted"].is_boolean()) {
    AddError(diags, "wrong_type", "encryption.unencrypted must be true or false",
             NodeLoc(doc.file, ChildNode(node, "unencrypted")));
    return;
  }
  if (unencrypted) {
    if (v.contains("key_env") || v.contains("key_file")) {
      AddError(diags, "invalid_value",
               "encryption: unencrypted: true takes no key_env or key_file, only the old key "
               "as fallback",
               NodeLoc(doc.file, node));
      return;
    }
    if (!v.contains("fallback")) {
      AddError(diags, "missing_field",
               "encryption: unencrypted: true needs the old key as fallback",
               NodeLoc(doc.file, node),
               "e.g. encryption: {unencrypted: true, fallback: {key_env: CAIRN_STATE_KEY}}, then "
               "`cairn state rekey`");
      return;
    }
  } else {
    b.encryption.key = LoadKeySource(doc, v, node, "encryption", diags);
    if (!b.encryption.key) return;
  }
  if (v.contains("fallback")) {
    const Value& fb = v["fallback"];
    const YamlNode fb_node = ChildNode(node, "fallback");
    if (!fb.is_object() || fb.contains("fallback") || fb.contains("unencrypted")) {
      AddError(diags, "invalid_value", "encryption.fallback must be a map with key_env or key_file",
               NodeLoc(doc.file, fb_node));
      b.encryption = {};
      return;
    }
    b.encryption.fallback = LoadKeySource(doc, fb, fb_node, "encryption.fallback", diags);
    if (!b.encryption.fallback) b.encryption = {};
  }
}

}  // namespace

void LoadProvider(const std::vector<const ManifestDocument*>& docs, const EvalSetting& eval,
                  ProviderConfig& p, std::vector<Diagnostic>& diags) {
  for (size_t n = 0; n < docs.size(); ++n) {
    const ManifestDocument& doc = *docs[n];
    if (n > 0) {
      AddError(diags, "duplicate_provider", "a stack has at most one provider document",
               doc.location, "first declared at " + LocationText(docs[0]->location));
      continue;
    }
    if (doc.value.contains("token")) {
      AddError(
          diags, "token_in_manifest", "provider documents must not hold a token",
          KeyLoc(doc.file, doc.node, "token"),
          "tokens are read from the environment only: set token_env to the name of the variable "
          "holding it (default CAIRN_TOKEN)");
    }
    ScanTokenLiterals(doc, doc.node, diags);
    if (doc.value.contains("endpoint")) {
      size_t before = diags.size();
      Value v = eval(doc, "endpoint", "a provider document");
      if (diags.size() != before) {
        // already reported
      } else if (!v.is_string()) {
        AddError(diags, "wrong_type", "endpoint must be a string, not " + ValueTypeNoun(v),
                 NodeLoc(doc.file, ChildNode(doc.node, "endpoint")));
      } else if (v.get<std::string>().rfind("http://", 0) != 0 &&
                 v.get<std::string>().rfind("https://", 0) != 0) {
        AddError(diags, "invalid_value", "endpoint must be an http:// or https:// URL",
                 NodeLoc(doc.file, ChildNode(doc.node, "endpoint")));
      } else {
        p.endpoint = v.get<std::string>();
      }
    }
    if (doc.value.contains("ca_bundle")) {
      size_t before = diags.size();
      Value v = eval(doc, "ca_bundle", "a provider document");
      if (diags.size() != before) {
        // already reported
      } else if (!v.is_string() || v.get_ref<const std::string&>().empty()) {
        AddError(
            diags, "wrong_type",
            "ca_bundle must be the path of a PEM file of CA certificates, not " + ValueTypeNoun(v),
            NodeLoc(doc.file, ChildNode(doc.node, "ca_bundle")));
      } else {
        p.ca_bundle = (std::filesystem::path(doc.dir) / v.get<std::string>()).string();
      }
    }
    if (doc.value.contains("token_env")) {
      const Value& v = doc.value["token_env"];
      if (!v.is_string() || !IsEnvName(v.get<std::string>())) {
        AddError(diags, "invalid_value",
                 "token_env must name an environment variable, such as CAIRN_TOKEN",
                 NodeLoc(doc.file, ChildNode(doc.node, "token_env")));
      } else {
        p.token_env = v.get<std::string>();
      }
    }
    if (doc.value.contains("parallelism")) {
      size_t before = diags.size();
      Value v = eval(doc, "parallelism", "a provider document");
      if (v.is_string()) v = PlainScalar(v.get<std::string>());
      if (diags.size() != before) {
        // already reported
      } else if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > 256) {
        AddError(diags, "invalid_value", "parallelism must be a whole number from 1 to 256",
                 NodeLoc(doc.file, ChildNode(doc.node, "parallelism")));
      } else {
        p.parallelism = static_cast<int>(v.get<long long>());
      }
    }
    if (doc.value.contains("timeouts")) {
      const Value& t = doc.value["timeouts"];
      YamlNode tn = ChildNode(doc.node, "timeouts");
      if (!t.is_object()) {
        AddError(diags, "wrong_type", "timeouts must be a mapping, not " + ValueTypeNoun(t),
                 NodeLoc(doc.file, tn));
      } else {
        for (auto it = t.begin(); it != t.end(); ++it) {
          if (std::find(kTimeoutKeys.begin(), kTimeoutKeys.end(), it.key()) == kTimeoutKeys.end()) {
            AddError(diags, "unknown_field", "unknown field \"" + it.key() + "\" in timeouts",
                     KeyLoc(doc.file, tn, it.key()), DidYouMean(it.key(), kTimeoutKeys));
          } else if (!it->is_number_integer() || it->get<long long>() < 1 ||
                     it->get<long long>() > 86400) {
            AddError(diags, "invalid_value",
                     "timeouts." + it.key() + " must be a whole number of seconds from 1 to 86400",
                     NodeLoc(doc.file, ChildNode(tn, it.key())));
          } else {
            p.timeouts[it.key()] = static_cast<int>(it->get<long long>());
          }
        }
      }
    }
  }
}

void LoadBackend(const std::vector<const ManifestDocument*>& docs, const EvalSetting& eval,
                 BackendConfig& b, std::vector<Diagnostic>& diags) {
  for (size_t n = 0; n < docs.size(); ++n) {
    const ManifestDocument& doc = *docs[n];
    if (n > 0) {
      AddError(diags, "duplicate_backend", "a stack has at most one backend document", doc.location,
               "first declared at " + LocationText(docs[0]->location));
      continue;
    }
    if (doc.value.contains("name") && doc.value["name"].is_string()) {
      b.stack_name = doc.value["name"].get<std::string>();
    }
    if (doc.value.contains("url")) {
      AddError(
          diags, "secret_in_manifest", "backend documents must not hold a connection URL",
          KeyLoc(doc.file, doc.node, "url"),
          "it carries credentials: put it in an environment variable and name that with url_env");
    }
    if (doc.value.contains("type")) {
      const Value& t = doc.value["type"];
      if (!t.is_string() || (t != "sqlite" && t != "postgres")) {
        AddError(diags, "invalid_value", "backend type must be \"sqlite\" or \"postgres\"",
                 NodeLoc(doc.file, ChildNode(doc.node, "type")));
        continue;
      }
      b.type = t.get<std::string>();
    }
    if (doc.value.contains("path")) {
      size_t before = diags.size();
      Value v = eval(doc, "path", "a backend document");
      if (diags.size() != before) {
        // already reported
      } else if (!v.is_string()) {
        AddError(diags, "wrong_type", "path must be a string, not " + ValueTypeNoun(v),
                 NodeLoc(doc.file, ChildNode(doc.node, "path")));
      } else if (b.type != "sqlite") {
        AddError(diags, "invalid_value", "path applies to the sqlite backend only",
                 KeyLoc(doc.file, doc.node, "path"));
      } else {
        b.path = v.get<std::string>();
      }
    }
    if (doc.value.contains("url_env")) {
      const Value& v = doc.value["url_env"];
      if (!v.is_string() || !IsEnvName(v.get<std::string>())) {
        AddError(diags, "invalid_value",
                 "url_env must name an environment variable, such as CAIRN_DATABASE_URL",
                 NodeLoc(doc.file, ChildNode(doc.node, "url_env")));
      } else if (b.type != "postgres") {
        AddError(diags, "invalid_value", "url_env applies to the postgres backend only",
                 KeyLoc(doc.file, doc.node, "url_env"));
      } else {
        b.url_env = v.get<std::string>();
      }
    }
    if (doc.value.contains("encryption")) LoadEncryption(doc, b, diags);
    if (b.type == "postgres" && b.url_env.empty() && !doc.value.contains("url_env")) {
      AddError(diags, "missing_field",
               "missing required field \"url_env\" in postgres backend document", doc.location,
               "name the environment variable holding the connection URL");
    }
    // Stacks sharing a database are told apart by name alone: one taken
    // from the directory made t1/web and t2/web one stack, and the second's
    // plan deleted the first's resources.
    if (b.type == "postgres" && b.stack_name.empty()) {
      AddError(diags, "missing_field",
               "missing required field \"name\" in postgres backend document", doc.location,
               "stacks sharing a database are told apart by this name alone; give each stack its "
               "own, e.g. name: web-production");
    }
  }
}

void LoadWatch(const std::vector<const ManifestDocument*>& docs, WatchConfig& w,
               std::vector<Diagnostic>& diags) {
  for (size_t n = 0; n < docs.size(); ++n) {
    const ManifestDocument& doc = *docs[n];
    if (n > 0) {
      AddError(diags, "duplicate_watch", "a stack has at most one watch document", doc.location,
               "first declared at " + LocationText(docs[0]->location));
      continue;
    }
    if (doc.value.contains("interval")) {
      const Value& v = doc.value["interval"];
      const SourceLocation at = NodeLoc(doc.file, ChildNode(doc.node, "interval"));
      Result<std::chrono::milliseconds> d =
          v.is_string() ? ParseDuration(v.get<std::string>())
                        : Result<std::chrono::milliseconds>(Status::InvalidArgument(
                              "a duration is a string, not " + ValueTypeNoun(v)));
      if (!d.ok()) {
        AddError(diags, "invalid_value", "interval: " + d.status().message(), at,
                 "e.g. interval: 5m (" + std::string(kDurationSyntax) + ")");
      } else if (*d < std::chrono::seconds(1)) {
        AddError(diags, "invalid_value", "interval must be at least 1s", at);
      } else {
        w.interval = *d;
      }
    }
    if (doc.value.contains("remediate")) {
      const Value& v = doc.value["remediate"];
      if (v == "none" || v == "drift-only") {
        w.remediate_drift = v == "drift-only";
      } else {
        AddError(diags, "invalid_value", "remediate must be \"none\" or \"drift-only\"",
                 NodeLoc(doc.file, ChildNode(doc.node, "remediate")),
                 "drift-only: `cairn watch` applies a plan that only puts drifted fields back");
      }
    }
  }
}

}  // namespace cairn
