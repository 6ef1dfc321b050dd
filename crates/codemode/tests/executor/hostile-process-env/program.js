return process.env.HOME
