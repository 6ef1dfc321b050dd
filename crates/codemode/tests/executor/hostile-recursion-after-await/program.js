await items.echo(1); const f = (n) => f(n + 1); f(0)
