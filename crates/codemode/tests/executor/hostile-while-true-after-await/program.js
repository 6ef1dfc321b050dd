await items.echo(1); while (true) {}
