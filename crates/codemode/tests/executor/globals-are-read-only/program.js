items = 5; codemode = null; return typeof items.echo
