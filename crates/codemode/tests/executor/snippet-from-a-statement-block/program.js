return await codemode.run('block', 5)
