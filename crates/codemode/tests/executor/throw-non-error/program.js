throw 'plain string'
