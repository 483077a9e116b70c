#include "engine/manifest/settings.h"

#include <algorithm>
#include <filesystem>

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

}  // namespace cairn
