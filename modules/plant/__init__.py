"""The virtual lab: actuator dynamics, specimens, sensors and the DAQ of an emulated laboratory.

identified_plant  an identified MIMO plant in zpk form, its uncertain variants and a realisation
actuators         actuator dynamics at the control rate (RK4 hold map of a linear plant, ideal actuators)
sensors           seeded sensor noise, one sample per control tick
daq               command volts, saturation and quantization of the DAQ
lab               the lab itself: actuators + sensors + DAQ, SI at its edges
first_order       a first-order actuator under a zero-order hold
specimens         linear and bilinear specimens
"""
