await Promise.all([items.echo(1), items.gate(2), items.echo(3)])
