const v = await codemode.step('s', async () => (await items.echo({x: 1})).x + 1); return v
