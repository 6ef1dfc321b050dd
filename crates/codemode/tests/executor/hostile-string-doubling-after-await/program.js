await items.echo(1); let s = 'x'; for (;;) s += s
