return await codemode.run('bad')
