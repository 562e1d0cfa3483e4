{#- History across runs for the fleet views (scripts/salt-data.sh runs it three
    times on one minion): one state that reports changes on every run (a
    cmd.run without unless/creates, the classic non-idempotent state), one that
    is idempotent (changes on the first run only), and one that starts failing
    on the third run (pillar drift_break). -#}
{%- set root = salt['config.get']('saltscope_scratch', '/tmp/saltscope-scratch/' ~ grains['id']) %}

drift.every_run:
  cmd.run:
    - name: date +%s%N > {{ root }}/drift-last-run

drift.idempotent:
  file.managed:
    - name: {{ root }}/drift/idempotent.conf
    - contents: the same on every run
    - makedirs: True

drift.health_check:
{%- if pillar.get('drift_break') %}
  test.fail_without_changes:
    - comment: 'health check failed: backend 10.20.30.40:8443 refused the connection'
{%- else %}
  test.succeed_without_changes:
    - comment: health check passed
{%- endif %}
    - name: drift health check
