datafile = 'network-800g.dat'
set terminal svg size 1000,700 dynamic background rgb 'white' font 'Sans,11'
set output 'network-800g.svg'
set title 'network-800g: what 800 and 1,600 Gb/s NICs buy over 400 Gb/s at 2,048 H100' noenhanced font ',10'
set grid
set key noenhanced below vertical font ',9'
set xlabel 'inter_node.nic_bandwidth' noenhanced
set xtics ('400Gb/s' 0, '800Gb/s' 1, '1600Gb/s' 2)
set offsets 0.2, 0.2, 0, 0
set ylabel 'tokens/s over the series'' first point'
plot datafile index 0 using 1:2 with linespoints lw 2 pt 7 lc 1 title 'llama2-7b, batch 1024x4k', \
     datafile index 1 using 1:2 with linespoints lw 2 pt 7 lc 2 title 'llama3-70b, batch 1024x8k'
