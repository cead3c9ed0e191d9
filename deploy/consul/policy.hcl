# Minimal Consul ACL policy for a Muster adapter (Consul 1.14; checked against a real agent with
# default_policy = "deny" by scripts/testenv/test/consul.policy.consul.test.ts). The adapter:
#   - registers its own services, named muster-*, each with a TTL check, renews that check and
#     deregisters them;
#   - reads the health of services (any name) to discover peers;
#   - creates, renews and destroys sessions on the agent's node;
#   - reads and writes keys under muster/, including lock acquire/release with its sessions.
# Everything else (other services' registrations, other keys, ACLs, agent endpoints, catalog
# writes) is denied.
#
#   consul acl policy create -name muster-adapter -rules @deploy/consul/policy.hcl
#   consul acl token create -policy-name muster-adapter -description "muster adapter"

# PUT /v1/agent/service/register and /deregister, and the TTL updates
# /v1/agent/check/{pass,warn,fail}/service:<id> all need service:write on the service name.
service_prefix "muster-" {
  policy = "write"
}

# GET /v1/health/service/<name> silently drops what the token cannot read: it needs service:read
# on <name> (write above already covers muster-*; this rule is for other services) ...
service_prefix "" {
  policy = "read"
}

# ... and node:read on the node each instance runs on; without it every list comes back empty.
node_prefix "" {
  policy = "read"
}

# Session rules are keyed by the NODE name the session is bound to (the agent's node), not by a
# session name: /v1/session/create, /renew and /destroy need session:write on that node. Node
# names are not known in advance, hence the empty prefix.
session_prefix "" {
  policy = "write"
}

# GET/PUT/DELETE /v1/kv/muster/...; ?acquire= and ?release= with a session need only key:write.
# The adapter takes and gives up locks and heartbeat keys through PUT /v1/txn (verbs lock, unlock,
# set, check-index, check-not-exists, check-session, delete), which checks the same key rights per
# operation; lock fencing tokens live under muster/fencing/.
# The trailing slash keeps e.g. "muster-other/" out.
key_prefix "muster/" {
  policy = "write"
}
