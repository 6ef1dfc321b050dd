return (function () {}).constructor('return this')()
