{#- Deliberately fails to render: the call below is undefined. -#}
broken.state:
  test.succeed_without_changes:
    - name: {{ salt['saltscope.no_such_function']() }}
