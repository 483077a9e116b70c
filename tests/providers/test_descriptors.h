// Inline x-cairn descriptors for provider tests, in the shape of
// schemas/<kind>.schema.json.
#pragma once

#include <map>
#include <string>

#include "base/value.h"

namespace cairn::testing {

inline Value InstanceDescriptor() {
  return Value::parse(R"({
    "kind": "instance",
    "computed": {"id": {"type": "string"}, "status": {"type": "string"},
                 "ipv4": {"type": "string"}, "created_at": {"type": "string"}},
    "immutable": ["region", "image", "network", "ssh_keys"],
    "references": {"network": "network", "ssh_keys": "ssh_key"},
    "wire": {
      "api": "control-plane",
      "collection": "/api/v1/compute",
      "envelope": "instance",
      "id_field": "publicId",
      "pagination": "next",
      "fields": {
        "name": {"request": "name", "response": "name"},
        "region": {"request": "region", "response": "regionKey"},
        "plan": {"request": "plan", "response": "planKey"},
        "image": {"request": "image", "response": "imageKey"},
        "ssh_keys": {"request": "sshKeys", "response": "sshKeys"},
        "network": {"request": "networkId", "response": "networkId"},
        "id": {"response": "publicId"},
        "status": {"response": "customerStatus.status"},
        "ipv4": {"response": "ipv4"},
        "created_at": {"response": "createdAt"}
      },
      "ready": {"status": "running", "timeout_seconds": 600}
    }
  })");
}

inline Value NetworkDescriptor() {
  return Value::parse(R"({
    "kind": "network",
    "immutable": ["region", "cidr"],
    "references": {},
    "wire": {
      "api": "control-plane", "collection": "/api/v1/networking", "envelope": "network",
      "id_field": "publicId", "pagination": "next",
      "fields": {
        "name": {"request": "name", "response": "name"},
        "region": {"request": "region", "response": "regionKey"},
        "cidr": {"request": "cidr", "response": "cidr"},
        "id": {"response": "publicId"},
        "status": {"response": "customerStatus.status"},
        "created_at": {"response": "createdAt"}
      },
      "ready": {"status": "running", "timeout_seconds": 600}
    }
  })");
}

inline Value SshKeyDescriptor() {
  return Value::parse(R"({
    "kind": "ssh_key",
    "immutable": ["public_key"],
    "references": {},
    "wire": {
      "api": "preview", "collection": "/v1/ssh_keys", "envelope": null, "id_field": "id",
      "pagination": "next_cursor",
      "fields": {
        "name": {"request": "name", "response": "name"},
        "public_key": {"request": "public_key", "response": "public_key"},
        "id": {"response": "id"},
        "fingerprint": {"response": "fingerprint"},
        "created_at": {"response": "created_at"}
      }
    }
  })");
}

inline Value FirewallDescriptor() {
  return Value::parse(R"({
    "kind": "firewall",
    "immutable": [],
    "references": {"instances": "instance"},
    "wire": {
      "api": "preview", "collection": "/v1/firewalls", "envelope": null, "id_field": "id",
      "pagination": "next_cursor",
      "fields": {
        "name": {"request": "name", "response": "name"},
        "rules": {"request": "rules", "response": "rules"},
        "instances": {"request": "instances", "response": "instances"},
        "id": {"response": "id"},
        "created_at": {"response": "created_at"}
      }
    }
  })");
}

inline Value VolumeDescriptor() {
  return Value::parse(R"({
    "kind": "volume",
    "immutable": ["region"],
    "references": {"instance": "instance"},
    "wire": {
      "api": "control-plane", "collection": "/api/v1/storage", "envelope": "volume",
      "id_field": "publicId", "pagination": "next",
      "fields": {
        "name": {"request": "name", "response": "name"},
        "region": {"request": "region", "response": "regionKey"},
        "size_gb": {"request": "sizeGb", "response": "sizeGb"},
        "instance": {"request": "instanceId", "response": "instanceId"},
        "id": {"response": "publicId"},
        "status": {"response": "customerStatus.status"},
        "created_at": {"response": "createdAt"}
      },
      "ready": {"status": "running", "timeout_seconds": 600}
    }
  })");
}

inline std::map<std::string, Value> TestKinds() {
  return {{"instance", InstanceDescriptor()},
          {"volume", VolumeDescriptor()},
          {"network", NetworkDescriptor()},
          {"ssh_key", SshKeyDescriptor()},
          {"firewall", FirewallDescriptor()}};
}

}  // namespace cairn::testing
