console.log('before'); throw new Error('model bug')
