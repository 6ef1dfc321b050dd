const r = await items.echo('x'.repeat(20 * 1024 * 1024)); return r.length
