return eval('require')
