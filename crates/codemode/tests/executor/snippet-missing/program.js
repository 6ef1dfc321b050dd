return await codemode.run('nope')
