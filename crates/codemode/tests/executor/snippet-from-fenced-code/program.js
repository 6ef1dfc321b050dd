return await codemode.run('fenced')
