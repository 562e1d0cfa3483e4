{#- A dozen no-op "package" checks, so each minion runs a few dozen states. -#}
{%- for pkg in ['openssl.libs', 'python3.11', 'nginx-1.24', 'redis.server', 'postgresql-16', 'libc6.dev', 'ca-certificates', 'tzdata.2026a', 'curl', 'jq.1.7'] %}
pkg.check.{{ pkg }}:
  test.succeed_without_changes:
    - name: {{ pkg }}
    - comment: '{{ pkg }} is already at the wanted version'
{%- endfor %}

pkg.unmanaged.note:
  test.nop:
    - name: unmanaged packages are ignored
