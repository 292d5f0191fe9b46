#!/bin/sh
# Creates the secret files that deploy/compose.yaml mounts, each only where it
# is missing, in deploy/secrets/ (or in SECRETS_DIR):
#
#   redis-url         redis://gateway:PASSWORD@redis:6379, with a new random password
#                     of the gateway's Redis user (REDIS_URL_FILE)
#   redis-users.acl   Redis users with the rules of deploy/redis-users.rules:
#                     `gateway` with the SHA-256 of that password and only the
#                     keys, channels and commands it needs (docs/deployment.md#redis);
#                     `functions`, which loads the gateway's function library
#                     and nothing else; `default` may PING (the health check)
#   redis-functions-url  the `functions` user's redis:// URL, with its own password,
#                     for the one-shot loader of deploy/compose.yaml
#   hub-api-key       empty: write the hub's API key into it (UPSTREAM_API_KEY_FILE)
#   hub-access-token  empty: write the hub's access token into it (static mode)
#   hub-login-username, hub-login-password
#                     empty: the hub account, for login mode (docs/deployment.md#hub-credentials)
#   clients.json      []: add the entries `npm run client-key` prints (docs/deployment.md)
#   redis-replication.conf, sentinel.conf, redis-sentinel-password
#                     for deploy/compose.sentinel.yaml: the replicas' and the
#                     Sentinels' logins (their users added to redis-users.acl)
#                     and the Sentinels' own password
#
# Each file holds its value alone; a trailing line break is ignored.
#
# The directory is 0700: other users of the host cannot read the files. The
# files themselves are 0644 because Compose mounts them as they are, and the
# containers' users (node, uid 1000; redis, uid 999) must read them.
set -eu

dir=${SECRETS_DIR:-$(dirname "$0")/secrets}
prefix=${REDIS_KEY_PREFIX:-cgw:}
case $prefix in
  '' | *[!A-Za-z0-9:._-]*) echo "init-secrets: REDIS_KEY_PREFIX must be letters, digits and : . _ - (as the gateway's setting)" >&2; exit 1 ;;
esac
# A user's ACL rules from deploy/redis-users.rules, with the key prefix.
rules () { sed -n "s/^$1 //p" "$(dirname "$0")/redis-users.rules" | sed "s/{prefix}/$prefix/g"; }
mkdir -p "$dir"
chmod 700 "$dir"

# A deployment from before 1.0.0 gave the gateway its Redis password alone, in
# redis-password: 1.0.0 reads it as part of REDIS_URL (REDIS_URL_FILE).
if [ ! -e "$dir/redis-url" ] && [ -e "$dir/redis-password" ]; then
  umask 022
  printf 'redis://gateway:%s@redis:6379\n' "$(cat "$dir/redis-password")" > "$dir/redis-url"
  echo "wrote $dir/redis-url from $dir/redis-password (the password is part of REDIS_URL now)"
fi

# The three files share the Redis passwords: all kept, or all written.
present=0
for file in redis-url redis-users.acl redis-functions-url; do
  [ -e "$dir/$file" ] && present=$((present + 1))
done
if [ "$present" -eq 3 ]; then
  echo "kept $dir/redis-url, $dir/redis-users.acl and $dir/redis-functions-url"
elif [ "$present" -gt 0 ]; then
  echo "init-secrets: some of $dir/redis-url, redis-users.acl and redis-functions-url exist without the others; they share the Redis passwords (a deployment from before the Redis functions has no redis-functions-url, one from before the secret files a gateway.env instead of redis-password): remove those left and run again" >&2
  exit 1
else
  # 32 random bytes in hex: nothing in it needs percent-encoding in a URL.
  password=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
  hash=$(printf %s "$password" | sha256sum | cut -d ' ' -f 1)
  functions_password=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
  functions_hash=$(printf %s "$functions_password" | sha256sum | cut -d ' ' -f 1)
  umask 022
  cat > "$dir/redis-users.acl" <<ACL
user default on nopass $(rules default)
user gateway on #$hash $(rules gateway)
user functions on #$functions_hash $(rules functions)
ACL
  printf 'redis://gateway:%s@redis:6379\n' "$password" > "$dir/redis-url"
  printf 'redis://functions:%s@redis:6379\n' "$functions_password" > "$dir/redis-functions-url"
  echo "wrote $dir/redis-url, $dir/redis-users.acl and $dir/redis-functions-url (new Redis passwords)"
fi

# For deploy/compose.sentinel.yaml: the users replicas and Sentinels log in to
# the data nodes as (added to redis-users.acl), the replicas' login, the
# Sentinels' configuration and their own password, for the gateways.
if [ -e "$dir/redis-replication.conf" ] && [ -e "$dir/sentinel.conf" ] && [ -e "$dir/redis-sentinel-password" ]; then
  echo "kept $dir/redis-replication.conf, $dir/sentinel.conf and $dir/redis-sentinel-password"
else
  replica=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
  watcher=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
  own=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
  umask 022
  grep -v '^user replica \|^user sentinel ' "$dir/redis-users.acl" > "$dir/redis-users.acl.new"
  cat >> "$dir/redis-users.acl.new" <<ACL
user replica on #$(printf %s "$replica" | sha256sum | cut -d ' ' -f 1) $(rules replica)
user sentinel on #$(printf %s "$watcher" | sha256sum | cut -d ' ' -f 1) $(rules sentinel)
ACL
  mv "$dir/redis-users.acl.new" "$dir/redis-users.acl"
  printf 'masteruser replica\nmasterauth %s\n' "$replica" > "$dir/redis-replication.conf"
  cat > "$dir/sentinel.conf" <<CONF
port 26379
sentinel resolve-hostnames yes
sentinel announce-hostnames yes
sentinel announce-ip @SELF@
sentinel monitor mymaster redis 6379 2
sentinel down-after-milliseconds mymaster 5000
sentinel failover-timeout mymaster 60000
sentinel auth-user mymaster sentinel
sentinel auth-pass mymaster $watcher
requirepass $own
sentinel sentinel-pass $own
CONF
  printf %s "$own" > "$dir/redis-sentinel-password"
  chmod 644 "$dir/redis-users.acl" "$dir/redis-replication.conf" "$dir/sentinel.conf" "$dir/redis-sentinel-password"
  echo "wrote $dir/redis-replication.conf, $dir/sentinel.conf, $dir/redis-sentinel-password (new passwords) and their users in $dir/redis-users.acl"
fi

umask 022
# Empty until filled in: the gateway refuses to start on an empty key, user name or
# password file it is told to read (the token file it re-reads as it changes).
for file in hub-api-key hub-access-token hub-login-username hub-login-password; do
  if [ ! -e "$dir/$file" ]; then
    : > "$dir/$file"
    echo "wrote $dir/$file (empty: write the value into it; docs/deployment.md#hub-credentials)"
  fi
done
if [ ! -e "$dir/clients.json" ]; then
  echo '[]' > "$dir/clients.json"
  echo "wrote $dir/clients.json (no client yet: add the entries npm run client-key prints)"
fi
chmod 644 "$dir/redis-url" "$dir/redis-users.acl" "$dir/redis-functions-url" "$dir/hub-api-key" "$dir/hub-access-token" "$dir/hub-login-username" "$dir/hub-login-password" "$dir/clients.json"
