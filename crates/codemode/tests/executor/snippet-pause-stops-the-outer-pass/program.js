await codemode.run('gated'); await items.echo('after')
