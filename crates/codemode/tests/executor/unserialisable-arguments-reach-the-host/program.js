const a = {}; a.self = a; await items.echo(a)
