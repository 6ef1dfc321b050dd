return (function () {}).constructor.constructor('return process')()
