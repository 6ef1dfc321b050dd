await items.fail({message: 'connector boom'})
