console.log('outer'); return await codemode.run('noisy')
