return await codemode.run('greet', 'world')
