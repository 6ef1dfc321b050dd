() => 'sync'
