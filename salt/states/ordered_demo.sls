{#- 13 states: with states_order_output on Python 3.11 the returner renames keys
    while iterating; for this many states the loop ends early instead of raising,
    so the document gets the run-number prefix on only part of its keys. -#}
{%- for n in ['alpha.one', 'beta.two', 'gamma.three', 'delta.four', 'epsilon.five', 'zeta.six', 'eta.seven', 'theta.eight', 'iota.nine', 'kappa.ten', 'lambda.eleven'] %}
ordered.{{ n }}:
  test.succeed_without_changes:
    - name: {{ n }}
{%- endfor %}

ordered.changed.twelve:
  test.succeed_with_changes:
    - name: twelve.example.com

ordered.failed.thirteen:
  test.fail_without_changes:
    - name: thirteen.example.com
    - comment: 'ordered demo failure <b>bold?</b>'
