{#- Saltscope demo state tree: outcomes differ per minion id.
    Scratch root comes from the minion config option `saltscope_scratch`
    (set by scripts/salt-data.sh to a dir under $SALTSCOPE_WORK); nothing
    outside it is touched. -#}
{%- set root = salt['config.get']('saltscope_scratch', '/tmp/saltscope-scratch/' ~ grains['id']) %}
{%- set mid = grains['id'] %}
{%- set role = 'web' if mid.startswith('web') else ('db' if mid.startswith('db') else ('cache' if mid.startswith('cache') else 'other')) %}

include:
  - saltscope.packages

saltscope.scratch.dir:
  file.directory:
    - name: {{ root }}
    - makedirs: True

# Seed an old version of app.conf so the next state always shows a unified diff.
app.conf.seed:
  cmd.run:
    - name: printf 'listen 8080\nworkers 2\nrole unknown\n' > {{ root }}/app.conf
    - require:
      - file: saltscope.scratch.dir

/tmp/saltscope/app.conf:
  file.managed:
    - name: {{ root }}/app.conf
    - mode: '0644'
    - contents: |
        # managed by salt for {{ mid }}
        listen {{ 80 if role == 'web' else 5432 if role == 'db' else 6379 }}
        workers 4
        role {{ role }}
    - require:
      - cmd: app.conf.seed

# Removed and re-created on every run: "removed" change then "New file".
fresh.marker.absent:
  file.absent:
    - name: {{ root }}/fresh.d/marker.txt

fresh.marker.present:
  file.managed:
    - name: {{ root }}/fresh.d/marker.txt
    - makedirs: True
    - contents: fresh marker for {{ mid }}
    - require:
      - file: fresh.marker.absent

# Unchanged after the first run.
nginx.d/site.example.com.conf:
  file.managed:
    - name: {{ root }}/nginx.d/site.example.com.conf
    - makedirs: True
    - contents: |
        server_name {{ mid }};

# One ID, two states.
motd.banner:
  file.managed:
    - name: {{ root }}/motd.txt
    - contents: Welcome to {{ mid }}
  cmd.run:
    - name: cat {{ root }}/motd.txt
    - onchanges:
      - file: motd.banner

reload.app.service:
  cmd.run:
    - name: echo "reloading app"; sleep 0.2
    - onchanges:
      - file: /tmp/saltscope/app.conf

reload.nginx.never:
  cmd.run:
    - name: echo "never runs"
    - onchanges:
      - file: nginx.d/site.example.com.conf

cmd.guarded.by.unless:
  cmd.run:
    - name: echo "should not run"
    - unless: 'true'

# Comments with markup: a viewer must render these as text.
xss.comment.script:
  test.succeed_without_changes:
    - comment: 'Checked <script>alert(1)</script> and <img src=x onerror=alert(1)> on {{ mid }}'

xss.stdout.cmd:
  cmd.run:
    - name: echo '<img src=x onerror=alert(1)><script>alert(1)</script>'

multiline.comment:
  test.configurable_test_state:
    - changes: False
    - result: True
    - comment: "first line\n\tsecond line, tab-indented\nthird line: {{ mid }}"

with.warnings:
  test.configurable_test_state:
    - changes: True
    - result: True
    - comment: state with a warning
    - warnings:
      - 'deprecated option "foo.bar" used'

{%- if role == 'db' %}
# db minions: a plain failure and a failed requisite
db.schema.migrate:
  test.fail_without_changes:
    - comment: 'Migration 0042_add.index failed: relation "jobs.minion" already exists'
{%- else %}
db.schema.migrate:
  test.succeed_without_changes:
    - comment: nothing to migrate on {{ mid }}
{%- endif %}

db.after.migrate:
  test.succeed_with_changes:
    - require:
      - test: db.schema.migrate

{%- if role == 'cache' %}
cache.warmup.script:
  cmd.run:
    - name: echo "warming cache"; echo "redis not reachable" >&2; exit 3
{%- else %}
cache.warmup.script:
  cmd.run:
    - name: echo "warming cache"
{%- endif %}

cache.after.warmup:
  test.succeed_without_changes:
    - require:
      - cmd: cache.warmup.script

{%- if role == 'web' %}
web.vhost.www.example.com:
  test.succeed_with_changes:
    - name: www.example.com
{%- endif %}

sleep.half.second:
  cmd.run:
    - name: sleep 0.5
