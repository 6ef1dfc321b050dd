return new Function('return 1')()
