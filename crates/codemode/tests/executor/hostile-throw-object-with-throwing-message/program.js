throw {get message() { throw new Error('x') }}
