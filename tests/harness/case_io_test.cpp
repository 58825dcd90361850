// placeholder: replaced by its tests
