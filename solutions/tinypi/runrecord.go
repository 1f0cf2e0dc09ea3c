package tinypi
